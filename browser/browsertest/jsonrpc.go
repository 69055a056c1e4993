package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// wsConn is a WebSocket with its life's context and one writer at a
// time; the relay's sockets and the scripted extension's share it.
type wsConn struct {
	c      *websocket.Conn
	ctx    context.Context // the socket's life
	cancel context.CancelFunc
	wmu    sync.Mutex
}

// send writes v as one text message; a json.RawMessage goes as is.
func (s *wsConn) send(v any) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	return s.c.Write(ctx, websocket.MessageText, data)
}

var errBadJSON = errors.New("not a JSON-RPC message")

// message is the part of a JSON-RPC message the relay looks at.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// hasID reports whether m carries a non-null id.
func (m message) hasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// idString returns the id's canonical text: a string's value, or a
// number's JSON text.
func idString(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(id))
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func response(id json.RawMessage, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

func errorResponse(id json.RawMessage, code int, msg string) map[string]any {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": rpcError{code, msg}}
}

func notification(method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
}

// encode marshals v, passing a json.RawMessage through untouched (Marshal
// would re-validate and compact megabytes).
func encode(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}
