package upstream

import (
	"bytes"
	"encoding/json"

	"github.com/mcpx/mcpx/rawjson"
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

// withoutHopMeta returns params without hopKeys in its _meta, and without
// a _meta left empty by that. Params that carry none (every legacy
// client's) are returned as they are after one substring scan.
func withoutHopMeta(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(`"io.modelcontextprotocol/`)) {
		return params
	}
	return withoutMeta(params, isHopKey)
}

// withoutMeta returns params without the members of its _meta that drop
// names, and without a _meta left empty by that; params as they came
// when they are not an object with an object _meta.
func withoutMeta(params json.RawMessage, drop func(rawjson.Key) bool) json.RawMessage {
	meta, err := rawjson.Get(params, "_meta")
	if err != nil || len(meta) == 0 || meta[0] != '{' {
		return params
	}
	kept, n, err := rawjson.Filter(meta, drop)
	if err != nil {
		return params
	}
	if n > 0 {
		out, _, err := rawjson.Replace(params, "_meta", kept)
		if err != nil {
			return params
		}
		return out
	}
	out, _, err := rawjson.Filter(params, func(k rawjson.Key) bool { return k.Is("_meta") })
	if err != nil {
		return params
	}
	return out
}

func isHopKey(k rawjson.Key) bool {
	for _, h := range hopKeys {
		if k.Is(h) {
			return true
		}
	}
	return false
}
