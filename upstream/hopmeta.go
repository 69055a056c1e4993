package upstream

import (
	"bytes"
	"encoding/json"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream/stdio"
)

// A modern client's request carries, in its _meta, what describes its own
// hop to mcpx: the protocol version, its capabilities, its info and the
// log level it wants. None of it is true of mcpx's hop to a legacy
// server (which agreed a version and capabilities at initialize), so a
// request to one goes without them; every other member (progressToken,
// traceparent, the client's own keys) passes as it came. A request to a
// modern server keeps them: spliceMeta leaves a client's version in place.

// hopKeys are the _meta members that describe one hop.
var hopKeys = []string{metaProtocolVersion, metaClientCapabilities, metaClientInfo, metaLogLevel}

// hopMark is in the params of nearly every request that carries a hop
// key, and in those of no legacy client's: one substring scan tells.
var hopMark = []byte(`"io.modelcontextprotocol/`)

// withoutHopMeta returns params without hopKeys in its _meta, and without
// a _meta left empty by that. Params that carry none (every legacy
// client's) are returned as they are after one substring scan.
func withoutHopMeta(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, hopMark) {
		return params
	}
	return withoutMeta(params, isHopKey)
}

// legacyRequestLine is requestLine of a request to a legacy server: the
// params without hopKeys in their _meta, written straight into the line,
// so that a modern client's request costs the one copy of its params a
// legacy client's does (BenchmarkHopFreeLine).
func legacyRequestLine(id json.RawMessage, method string, params json.RawMessage) []byte {
	if !bytes.Contains(params, hopMark) {
		return stdio.RequestLine(id, method, params)
	}
	params = jsonrpc.OneLine(params)
	line := make([]byte, 0, len(params)+len(id)+len(method)+48)
	// The request without params, its closing brace then replaced by them.
	line = jsonrpc.AppendRequest(line, id, method, nil)
	line = append(line[:len(line)-1], `,"params":`...)
	line, ok := appendWithoutMeta(line, params, isHopKey)
	if !ok {
		return stdio.RequestLine(id, method, params)
	}
	return append(line, '}', '\n')
}

// withoutMeta returns params without the members of its _meta that drop
// names, and without a _meta left empty by that; params as they came
// when they are not an object.
func withoutMeta(params json.RawMessage, drop func(rawjson.Key) bool) json.RawMessage {
	if out, ok := appendWithoutMeta(make([]byte, 0, len(params)), params, drop); ok {
		return out
	}
	return params
}

// appendWithoutMeta appends params to dst without the members of its
// _meta that drop names, and without a _meta left empty by that, in one
// scan of params and one of the _meta. The other members keep their
// bytes and their order. ok is false, dst returned as it came, when
// params are not an object; a _meta that is not one is kept as it is.
func appendWithoutMeta(dst []byte, params json.RawMessage, drop func(rawjson.Key) bool) (out []byte, ok bool) {
	out = append(dst, '{')
	members := 0
	err := rawjson.Scan(params, func(k rawjson.Key, v []byte) bool {
		mark := len(out)
		if members > 0 {
			out = append(out, ',')
		}
		out = append(append(out, k...), ':')
		if len(v) > 0 && v[0] == '{' && k.Is("_meta") {
			var kept int
			var err error
			if out, kept, err = rawjson.AppendFilter(out, v, drop); err != nil {
				out = append(out, v...) // unreadable: the server's to judge
			} else if kept == 0 {
				out = out[:mark] // nothing left: no _meta
				return true
			}
		} else {
			out = append(out, v...)
		}
		members++
		return true
	})
	if err != nil {
		return dst, false
	}
	return append(out, '}'), true
}

func isHopKey(k rawjson.Key) bool {
	if !bytes.HasPrefix(k, hopMark) && bytes.IndexByte(k, '\\') < 0 {
		return false // the common case, told without comparing each key
	}
	for _, h := range hopKeys {
		if k.Is(h) {
			return true
		}
	}
	return false
}
