// Package rpcwire holds the JSON-RPC pieces that mcpx's relay server and
// the test kit's scripted peers both write on their WebSockets: the
// envelope they route by, the messages they build, and a connection that
// one writer at a time sends on.
package rpcwire

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
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

// Message is the part of a frame a relay routes by. ConnectionID is the
// legacy protocol's routing field.
type Message struct {
	ID           json.RawMessage `json:"id,omitempty"`
	Method       string          `json:"method,omitempty"`
	Params       json.RawMessage `json:"params,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
	Error        json.RawMessage `json:"error,omitempty"`
	ConnectionID string          `json:"connectionId,omitempty"`
}

// HasID reports whether m carries a non-null id.
func (m Message) HasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// IDString returns an id's canonical text: a string's value, or a
// number's JSON text.
func IDString(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(id))
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Response is a JSON-RPC result for the request with this id.
func Response(id json.RawMessage, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

// ErrorResponse is a JSON-RPC error for the request with this id (null
// when there is none).
func ErrorResponse(id json.RawMessage, code int, msg string) map[string]any {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": Error{code, msg}}
}

// Notification is a JSON-RPC notification.
func Notification(method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
}

// Encode marshals v, passing a json.RawMessage through untouched (Marshal
// would re-validate and compact megabytes).
func Encode(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}
