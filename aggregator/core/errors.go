package core

import (
	"encoding/json"

	"github.com/mcpx/mcpx/jsonrpc"
)

// JSON-RPC and MCP error codes a modern client is answered with (see
// package jsonrpc).
const (
	CodeParseError                 = jsonrpc.CodeParseError
	CodeInvalidRequest             = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound             = jsonrpc.CodeMethodNotFound
	CodeInvalidParams              = jsonrpc.CodeInvalidParams
	CodeInternalError              = jsonrpc.CodeInternalError
	CodeHeaderMismatch             = jsonrpc.CodeHeaderMismatch
	CodeMissingClientCapability    = jsonrpc.CodeMissingClientCapability
	CodeUnsupportedProtocolVersion = jsonrpc.CodeUnsupportedProtocolVersion
)

// Error is a JSON-RPC error answered to the client.
type Error = jsonrpc.Error

// notification renders a JSON-RPC notification.
func notification(method string, params json.RawMessage) []byte {
	return jsonrpc.AppendNotification(make([]byte, 0, len(params)+len(method)+40), method, params)
}
