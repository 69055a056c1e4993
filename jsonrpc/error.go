package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// Error codes of JSON-RPC 2.0.
const (
	CodeParseError     = -32700 // the message is not JSON
	CodeInvalidRequest = -32600 // JSON, but not a valid request
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error codes of MCP. Since revision 2026-07-28, -32000 to -32019 stay
// the implementation's and -32020 to -32099 are the specification's.
const (
	// CodeResourceNotFound: resources/read of a URI the server does not
	// have. Revision 2026-07-28 answers [CodeInvalidParams] instead; this
	// code is still sent to, and taken from, peers of earlier revisions.
	CodeResourceNotFound = -32002
	// CodeHeaderMismatch: an HTTP header (MCP-Protocol-Version,
	// Mcp-Method, Mcp-Name, Mcp-Param-*) disagrees with the body or is
	// missing.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: the request needs a capability the
	// client did not declare.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the request's protocol version is
	// not served; the data names the ones that are.
	CodeUnsupportedProtocolVersion = -32022
	// CodeURLElicitationRequired: the request needs the user to open a
	// URL first (URL-mode elicitation).
	CodeURLElicitationRequired = -32042
)

// Error is a JSON-RPC error object. It is a Go error too, so a peer's
// error can travel up a call stack and be answered on unchanged: Data is
// kept as the bytes the peer sent.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error is the message and the code; code 0 means the peer sent none,
// and is left out.
func (e *Error) Error() string {
	if e.Code == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// Errorf is an Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// DecodeError reads an error member in any of the shapes real peers
// send: the standard {code, message, data}; {message} or {error} without
// a code (browser extensions send {message, stack}); or a bare string.
// A missing code is 0 and a missing message says so; what is not JSON at
// all becomes an Error saying that, with the start of the bytes.
func DecodeError(raw json.RawMessage) *Error {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return &Error{Message: s}
		}
	}
	var obj struct {
		Code    json.Number     `json:"code"`
		Message string          `json:"message"`
		Error   string          `json:"error"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return &Error{Message: "malformed error: " + truncate(string(raw), 200)}
	}
	e := &Error{Message: obj.Message}
	if string(obj.Data) != "null" {
		e.Data = obj.Data
	}
	if e.Message == "" {
		e.Message = obj.Error
	}
	if e.Message == "" {
		e.Message = "error without a message"
	}
	if n, err := obj.Code.Int64(); err == nil {
		e.Code = int(n)
	}
	return e
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
