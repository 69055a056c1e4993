// Package jsonrpc holds the JSON-RPC 2.0 messages that mcpx's upstream
// transports exchange with a server: a request, its response, and the
// function that answers a request the server sends.
//
// These are mcpx's own rather than mcp-go's client/transport types: that
// package imports mcp-go's server, and with it a JSON-schema library whose
// package initialisation alone took about half of mcpx's start (see
// BenchmarkInit in cmd/mcpx).
package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
)

// Version is the "jsonrpc" member of every message.
const Version = mcp.JSONRPC_VERSION

// ErrClosed is returned by a transport that was closed, or whose
// connection ended, for a request that cannot be answered any more.
var ErrClosed = errors.New("transport closed")

// Request is a request, to a server or from one. Params is sent as JSON;
// a json.RawMessage goes out unchanged.
type Request struct {
	JSONRPC string        `json:"jsonrpc"`
	ID      mcp.RequestId `json:"id"`
	Method  string        `json:"method"`
	Params  any           `json:"params,omitempty"`
}

// Response is the answer to a Request: a Result or an Error, kept as the
// bytes the peer sent.
type Response struct {
	JSONRPC string                   `json:"jsonrpc"`
	ID      mcp.RequestId            `json:"id"`
	Result  json.RawMessage          `json:"result,omitempty"`
	Error   *mcp.JSONRPCErrorDetails `json:"error,omitempty"`
}

// NewResult returns the successful answer to the request with that id.
func NewResult(id mcp.RequestId, result json.RawMessage) *Response {
	return &Response{JSONRPC: Version, ID: id, Result: result}
}

// NewError returns the error answer to the request with that id.
func NewError(id mcp.RequestId, code int, message string, data any) *Response {
	e := mcp.NewJSONRPCErrorDetails(code, message, data)
	return &Response{JSONRPC: Version, ID: id, Error: &e}
}

// RequestHandler answers a request the server sent. A nil response is
// answered "method not found".
type RequestHandler func(ctx context.Context, req Request) (*Response, error)
