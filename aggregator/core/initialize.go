package core

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/jsonrpc"
)

// ServedCapabilities are what mcpx declares in initialize (and
// server/discover): everything a catalog of upstreams can offer, since
// servers come and go during the session.
const ServedCapabilities = `{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"completions":{}}`

// initialize answers the initialize request: it keeps the client's info
// and capabilities on the session and settles the protocol version (the
// client's when mcpx speaks it, else the latest that has the handshake).
func (s *Session) initialize(params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	var p mcp.InitializeParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: CodeInvalidRequest, Message: "unparsable initialize request: " + err.Error()}
		}
	}
	s.hs.initialized(p.ClientInfo, p.Capabilities)
	res := make([]byte, 0, 256)
	res = append(res, `{"protocolVersion":`...)
	res = append(res, quote(mcp.NegotiateLegacyVersion(p.ProtocolVersion))...)
	res = append(res, `,"capabilities":`...)
	res = append(res, ServedCapabilities...)
	res = append(res, `,"serverInfo":{"name":"mcpx","version":`...)
	res = append(res, quote(s.o.Version)...)
	return append(res, "}}"...), nil
}

// isObject reports whether optional params are absent, null or an object.
func isObject(params json.RawMessage) bool {
	return len(params) == 0 || string(params) == "null" || params[0] == '{'
}
