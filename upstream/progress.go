package upstream

import (
	"bytes"
	"encoding/json"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// progressRoute is where one upstream token's progress goes.
type progressRoute struct {
	token  json.RawMessage // the caller's token, exactly as it was sent; nil when it sent none
	report func(json.RawMessage)
	touch  *limitedCall // whose callTimeout progress restarts; nil when it has none
}

// routeProgress swaps the caller's progress token in params for one of
// the connection's own, the request's id (unique on the connection, and
// made already), and registers the route to report (CallOptions.Progress;
// nil: none). A request under a callTimeout
// (touch) gets a token even when the caller sent none, so that a server
// reporting progress keeps its call alive. It returns params as they are,
// and false, when there is nothing to route; unroute undoes it.
func (cn *conn) routeProgress(id string, touch *limitedCall, report func(json.RawMessage), params json.RawMessage) (json.RawMessage, bool) {
	if report == nil && touch == nil || len(params) == 0 {
		return params, false
	}
	if touch == nil && !bytes.Contains(params, []byte(`"progressToken"`)) {
		// Most calls ask for no progress: one scan of the bytes, not a
		// decode of the params, tells.
		return params, false
	}
	if touch != nil && !bytes.Contains(params, []byte(`"_meta"`)) {
		// The common case under a callTimeout: no _meta, so a token of
		// mcpx's own goes first, without a scan of the params.
		if p := bytes.TrimLeft(params, " \t\r\n"); len(p) > 1 && p[0] == '{' {
			swapped := make([]byte, 0, len(p)+len(id)+32)
			swapped = append(swapped, `{"_meta":{"progressToken":`...)
			swapped = rawjson.AppendString(swapped, id)
			swapped = append(swapped, '}')
			if rest := bytes.TrimLeft(p[1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
				swapped = append(swapped, ',')
			}
			swapped = append(swapped, p[1:]...)
			cn.route(id, progressRoute{touch: touch})
			return swapped, true
		}
	}
	// The token is spliced into the caller's bytes: everything else in
	// the params reaches the server as it was sent.
	metaStart, metaEnd := -1, -1
	if err := rawjson.ScanBounds(params, func(k rawjson.Key, start, end int) bool {
		if k.Is("_meta") {
			metaStart, metaEnd = start, end
		}
		return true
	}); err != nil {
		return params, false
	}
	var meta []byte
	if metaStart >= 0 && string(params[metaStart:metaEnd]) != "null" {
		meta = params[metaStart:metaEnd]
	}
	if meta != nil && meta[0] != '{' {
		return params, false // not an object: leave it to the server
	}
	tokStart, tokEnd := -1, -1
	if meta != nil {
		if err := rawjson.ScanBounds(meta, func(k rawjson.Key, start, end int) bool {
			if k.Is("progressToken") {
				tokStart, tokEnd = start, end
			}
			return true
		}); err != nil {
			return params, false
		}
	}
	var token []byte
	if tokStart >= 0 {
		token = meta[tokStart:tokEnd]
	}
	if len(token) == 0 || string(token) == "null" || report == nil {
		// Nothing to relay: progress, if any, only keeps the call alive.
		if touch == nil {
			return params, false
		}
		token, report = nil, nil
	}
	var swapped []byte
	switch {
	case tokStart >= 0: // the caller's token, swapped where it is
		swapped = splice(params, metaStart+tokStart, metaStart+tokEnd, nil, id, nil)
	case meta != nil: // first in the caller's _meta
		sep := []byte(",")
		if isEmptyObject(meta) {
			sep = nil
		}
		swapped = splice(params, metaStart+1, metaStart+1, []byte(`"progressToken":`), id, sep)
	case metaStart >= 0: // "_meta":null
		swapped = splice(params, metaStart, metaEnd, []byte(`{"progressToken":`), id, []byte("}"))
	default:
		var err error
		if swapped, err = rawjson.Set(params, "_meta", append(rawjson.AppendString([]byte(`{"progressToken":`), id), '}')); err != nil {
			return params, false
		}
	}
	cn.route(id, progressRoute{token: token, report: report, touch: touch})
	return swapped, true
}

// splice returns a copy of b with b[start:end] replaced by before, id as
// a JSON string, and after: the one copy a token costs.
func splice(b []byte, start, end int, before []byte, id string, after []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(before)+len(id)+len(after)+2)
	out = append(out, b[:start]...)
	out = append(out, before...)
	out = rawjson.AppendString(out, id)
	out = append(out, after...)
	return append(out, b[end:]...)
}

// isEmptyObject reports whether the object obj has no member.
func isEmptyObject(obj []byte) bool {
	return len(bytes.TrimSpace(obj[1:len(obj)-1])) == 0
}

// route sends the progress for token to r.
func (cn *conn) route(token string, r progressRoute) {
	cn.progressMu.Lock()
	defer cn.progressMu.Unlock()
	if cn.progress == nil {
		cn.progress = map[string]progressRoute{}
	}
	cn.progress[token] = r
}

// unroute drops the route of token, when routeProgress made one.
func (cn *conn) unroute(token string, routed bool) {
	if !routed {
		return
	}
	cn.progressMu.Lock()
	delete(cn.progress, token)
	cn.progressMu.Unlock()
}

// relayProgress passes an upstream progress notification to the request
// it belongs to. Progress for an unknown token (a request that has already
// been answered) is dropped, as the protocol requires.
func (cn *conn) relayProgress(params json.RawMessage) {
	raw, err := rawjson.Get(params, "progressToken")
	if err != nil {
		return
	}
	own, ok := rawjson.String(raw)
	if !ok {
		return
	}
	cn.progressMu.Lock()
	route, ok := cn.progress[own]
	cn.progressMu.Unlock()
	if !ok {
		return
	}
	if route.touch != nil {
		route.touch.keepAlive()
	}
	if route.report == nil {
		return
	}
	// The caller's token in place of mcpx's; every other byte is the
	// server's (a progress of 2^64 keeps its digits).
	b, _, err := rawjson.Replace(jsonrpc.OneLine(params), "progressToken", route.token)
	if err != nil {
		return
	}
	route.report(b)
}
