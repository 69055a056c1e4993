// Package rpcwire holds what mcpx's relay server, its client and the test
// kit's scripted peers share on their WebSockets: the frame they route by
// (a [jsonrpc.Message] with the legacy protocol's connectionId), the
// messages they build, and a connection that one writer at a time sends
// on.
package rpcwire

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/jsonrpc"
)

// WriteTimeout bounds one write to one socket: a peer that stops reading
// loses its socket rather than holding up the writer.
const WriteTimeout = 10 * time.Second

// Conn is a WebSocket with its life's context and one writer at a time.
type Conn struct {
	WS     *websocket.Conn
	Ctx    context.Context // the socket's life
	Cancel context.CancelFunc
	wmu    sync.Mutex
}

// Send writes v as one text message; a json.RawMessage goes as is.
func (c *Conn) Send(v any) error {
	data, err := Encode(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	ctx, cancel := context.WithTimeout(c.Ctx, WriteTimeout)
	defer cancel()
	return c.WS.Write(ctx, websocket.MessageText, data)
}

// Error codes of the relay protocol (MCP Proxy Protocol 1.0), beside
// JSON-RPC's own (package jsonrpc).
const (
	CodeServerError      = -32000 // the relay's or the extension's failure
	CodeAlreadyConnected = -32001 // connect by a client connected already
)

// Message is a frame on a relay socket: a JSON-RPC message, and the
// legacy protocol's routing member after it.
type Message struct {
	jsonrpc.Message
	ConnectionID string `json:"connectionId,omitempty"`
}

// Response is a JSON-RPC result for the request with this id.
func Response(id json.RawMessage, result any) json.RawMessage {
	res, err := json.Marshal(result)
	if err != nil {
		return ErrorResponse(id, jsonrpc.CodeInternalError, "encode the result: "+err.Error())
	}
	return jsonrpc.AppendResult(make([]byte, 0, jsonrpc.ResultSize(id, res)), id, res)
}

// ErrorResponse is a JSON-RPC error for the request with this id (null
// when there is none).
func ErrorResponse(id json.RawMessage, code int, msg string) json.RawMessage {
	return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: code, Message: msg})
}

// Notification is a JSON-RPC notification.
func Notification(method string, params any) json.RawMessage {
	p, err := json.Marshal(params)
	if err != nil {
		p = nil // params of ours: maps of plain values
	}
	return jsonrpc.AppendNotification(nil, method, p)
}

// Encode marshals v, passing a json.RawMessage through untouched (Marshal
// would re-validate and compact megabytes).
func Encode(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}
