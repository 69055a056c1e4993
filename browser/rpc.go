package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// RemoteError is an error answered by the relay or the extension. Real
// peers send three shapes: {code, message}, {message, stack} without a
// code, and a bare string; all decode to this.
type RemoteError struct {
	Code    int // 0 when the peer sent none
	Message string
}

func (e *RemoteError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
	}
	return e.Message
}

// Codes the relay uses (MCP Proxy Protocol 1.0).
const (
	codeRelayError       = -32000
	codeAlreadyConnected = -32001
)

// decodeError reads a JSON-RPC error member in any of the three shapes.
func decodeError(raw json.RawMessage) *RemoteError {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &RemoteError{Message: s}
	}
	var obj struct {
		Code    json.Number `json:"code"`
		Message string      `json:"message"`
		Error   string      `json:"error"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return &RemoteError{Message: "malformed error: " + truncate(string(raw), 200)}
	}
	e := &RemoteError{Message: obj.Message}
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

func isCode(err error, code int) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Code == code
}

// frame is any JSON-RPC message on the relay socket.
type frame struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
	// ConnectionID routes messages of the legacy protocol.
	ConnectionID string `json:"connectionId,omitempty"`
}

// idKey is the canonical text of an id, so that 7 and "7" from a peer that
// stringifies ids still find their call.
func idKey(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(id))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
