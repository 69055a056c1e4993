package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// socket is one accepted WebSocket: one reader (its handler), one writer
// at a time.
type socket struct {
	c      *websocket.Conn
	side   string
	label  string
	ctx    context.Context // the socket's life
	cancel context.CancelFunc
	wmu    sync.Mutex
}

// send writes v as one text message; a json.RawMessage goes as is.
func (k *socket) send(v any) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	k.wmu.Lock()
	defer k.wmu.Unlock()
	ctx, cancel := context.WithTimeout(k.ctx, writeTimeout)
	defer cancel()
	return k.c.Write(ctx, websocket.MessageText, data)
}

var errBadJSON = errors.New("not a JSON object")

// message is the part of a frame the relay looks at. ConnectionID is seed
// 002's routing field.
type message struct {
	ID           json.RawMessage `json:"id,omitempty"`
	Method       string          `json:"method,omitempty"`
	Params       json.RawMessage `json:"params,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
	Error        json.RawMessage `json:"error,omitempty"`
	ConnectionID string          `json:"connectionId,omitempty"`
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

// Error codes of the protocol.
const (
	codeServerError      = -32000
	codeAlreadyConnected = -32001
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
)

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

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
