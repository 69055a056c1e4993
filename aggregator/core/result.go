package core

import (
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/rawjson"
)

// result is the answer of a source's call of method on target with args:
// its result (input_required when the source, a dual-era one, asked in
// its result) or its error. A question the client (of caps) did not
// declare it can answer is refused; route is where the catalog sent the
// call, signed into the state for the retry (Peer.SetRoute).
func (s *Server) result(method, target string, args, res json.RawMessage, err error, caps Capabilities, route string) (json.RawMessage, *Error) {
	if err != nil {
		return nil, asError(err)
	}
	sh, ok := readShape(res)
	if !ok || len(sh.inputs) == 0 || string(sh.inputs) == "null" {
		return s.completeShaped(res, sh, ok, method == "resources/read"), nil
	}
	// The source asked in its result (it has the answers come back with
	// the retry, with its own requestState): pass it on, that state kept
	// inside one of ours.
	if e := allowedAll(caps, sh.inputs); e != nil {
		return nil, e
	}
	up, _ := rawjson.String(sh.state)
	state := s.states.mint(statePayload{Method: method, Target: target, Digest: argumentsDigest(args), Upstream: up, Route: route})
	b := []byte(`{"resultType":"input_required","inputRequests":`)
	b = append(b, sh.inputs...)
	b = append(b, `,"requestState":`...)
	b = append(b, quote(state)...)
	b = append(b, ',')
	b = append(b, s.serverInfo...)
	return append(b, '}'), nil
}

// shape is what one scan of a source's result finds of its members.
type shape struct {
	hasType, hasTTL, hasScope bool
	// meta and metaEnd are the bounds of its _meta's value; meta is -1
	// when it has none.
	meta, metaEnd int
	// inputs and state are its inputRequests and requestState, if any.
	inputs, state []byte
}

// readShape scans res, a result; ok is false when it is not an object.
func readShape(res json.RawMessage) (sh shape, ok bool) {
	sh.meta = -1
	err := rawjson.ScanBounds(res, func(k rawjson.Key, start, end int) bool {
		switch {
		case k.Is("resultType"):
			sh.hasType = true
		case k.Is("_meta"):
			sh.meta, sh.metaEnd = start, end
		case k.Is("ttlMs"):
			sh.hasTTL = true
		case k.Is("cacheScope"):
			sh.hasScope = true
		case k.Is("inputRequests"):
			sh.inputs = res[start:end]
		case k.Is("requestState"):
			sh.state = res[start:end]
		}
		return true
	})
	return sh, err == nil
}

// complete marks res as a complete result of revision 2026-07-28: a
// resultType (unless the source, a modern one, set it), serverInfo in its
// _meta, and for a cacheable result (lists, resources/read) ttlMs and
// cacheScope unless the source set them. Every other byte is the
// source's.
func (s *Server) complete(res json.RawMessage, cacheable bool) json.RawMessage {
	sh, ok := readShape(res)
	return s.completeShaped(res, sh, ok, cacheable)
}

// completeShaped is complete of res, which readShape read as sh (ok:
// an object). It copies res once, with what it adds spliced in.
func (s *Server) completeShaped(res json.RawMessage, sh shape, ok, cacheable bool) json.RawMessage {
	if !ok {
		return res // not an object: the source's answer as it was
	}
	info := s.serverInfo[len(`"_meta":{`) : len(s.serverInfo)-1] // "…/serverInfo":{…}
	meta := sh.meta
	if meta >= 0 && !spliceable(res[meta:sh.metaEnd]) {
		if m, err := rawjson.Set(res[meta:sh.metaEnd], metaServerInfo, info[len(`"`+metaServerInfo+`":`):]); err == nil {
			res, _, _ = rawjson.Replace(res, "_meta", m)
		}
		meta = -2 // its serverInfo set where it was, or a _meta left as it was
	}
	open := 0
	for open < len(res) && res[open] != '{' {
		open++
	}
	out := make([]byte, 0, len(res)+len(s.serverInfo)+80)
	out = append(out, '{')
	if !sh.hasType {
		out = append(out, `"resultType":"complete",`...)
	}
	if meta == -1 {
		out = append(out, s.serverInfo...)
		out = append(out, ',')
	}
	if cacheable && !sh.hasTTL {
		out = fmt.Appendf(out, `"ttlMs":%d,`, s.o.CacheTTL.Milliseconds())
	}
	if cacheable && !sh.hasScope {
		// What mcpx lists depends on its config and profile, not on who
		// asks; but a shared cache in front of mcpx would outlive a
		// reload, so it stays private.
		out = append(out, `"cacheScope":"private",`...)
	}
	rest := res[open+1:]
	if meta >= 0 {
		// serverInfo goes first in the source's _meta, in the same copy.
		out = append(out, res[open+1:meta+1]...)
		out = append(out, info...)
		if !isEmptyObject(res[meta+1:]) {
			out = append(out, ',')
		}
		return append(out, res[meta+1:]...)
	}
	if len(rest) > 0 && rest[0] == '}' || len(rest) > 1 && isEmptyObject(rest) {
		out = out[:len(out)-1] // no member follows: drop the last comma
	}
	return append(out, rest...)
}

// spliceable reports whether serverInfo can go first in meta: an object
// that does not have one already.
func spliceable(meta []byte) bool {
	if len(meta) == 0 || meta[0] != '{' {
		return false
	}
	found := false
	err := rawjson.Scan(meta, func(k rawjson.Key, _ []byte) bool {
		found = k.Is(metaServerInfo)
		return !found
	})
	return err == nil && !found
}
