package core

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// JSON-RPC and MCP error codes a modern client is answered with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeHeaderMismatch: an HTTP header (MCP-Protocol-Version, Mcp-Method,
	// Mcp-Name, Mcp-Param-*) disagrees with the body or is missing.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: the request needs a capability the
	// client did not declare in its _meta.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the _meta version is not served.
	CodeUnsupportedProtocolVersion = -32022
)

// Error is a JSON-RPC error answered to the client.
type Error struct {
	Code    int
	Message string
	Data    json.RawMessage // optional
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// errorf is an Error with a formatted message.
func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// httpStatus is the status a modern error is answered with over HTTP, as
// the streamable HTTP transport of 2026-07-28 asks; 200 for the others,
// which ride in the body like any answer.
func (e *Error) httpStatus() int {
	switch e.Code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeInvalidParams, CodeUnsupportedProtocolVersion, CodeMissingClientCapability, CodeHeaderMismatch,
		CodeInvalidRequest, CodeParseError:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// response renders a JSON-RPC response carrying result or e.
func response(id json.RawMessage, result json.RawMessage, e *Error) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b := make([]byte, 0, len(result)+len(id)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if e != nil {
		b = append(b, `,"error":{"code":`...)
		b = fmt.Appendf(b, "%d", e.Code)
		b = append(b, `,"message":`...)
		msg, _ := json.Marshal(e.Message)
		b = append(b, msg...)
		if len(e.Data) > 0 {
			b = append(b, `,"data":`...)
			b = append(b, e.Data...)
		}
		return append(b, "}}"...)
	}
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// notification renders a JSON-RPC notification.
func notification(method string, params json.RawMessage) []byte {
	m, _ := json.Marshal(method)
	b := make([]byte, 0, len(params)+len(m)+40)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = append(b, m...)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}
