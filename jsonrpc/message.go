package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// Version is the "jsonrpc" member of every message.
const Version = "2.0"

// ErrClosed is returned by a transport that was closed, or whose
// connection ended, for a request that cannot be answered any more.
var ErrClosed = errors.New("transport closed")

// Message is any JSON-RPC message: a request, a notification or a
// response, told apart by which members it has. Every member but Method
// is the raw JSON the peer sent (nil when absent), so nothing is lost on
// the way through and nothing is decoded that is not needed. json.Marshal
// writes the members in this order and leaves out the absent ones.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// HasID reports whether m has an id other than null.
func (m Message) HasID() bool { return hasID(m.ID) }

// IsRequest reports whether m is a request: a method and an id.
func (m Message) IsRequest() bool { return m.Method != "" && m.HasID() }

// IsNotification reports whether m is a notification: a method and no
// id (or a null one).
func (m Message) IsNotification() bool { return m.Method != "" && !m.HasID() }

// IsResponse reports whether m answers a request: an id and no method.
func (m Message) IsResponse() bool { return m.Method == "" && m.HasID() }

// HasError reports whether m carries an error member other than null.
func (m Message) HasError() bool { return len(m.Error) > 0 && string(m.Error) != "null" }

// Err is m's error decoded (see [DecodeError]); nil when it has none.
func (m Message) Err() *Error {
	if !m.HasError() {
		return nil
	}
	return DecodeError(m.Error)
}

// NewResult is the answer to the request with that id.
func NewResult(id, result json.RawMessage) *Message {
	return &Message{JSONRPC: Version, ID: orNull(id), Result: result}
}

// NewError is the error answer to the request with that id (null when
// there is none).
func NewError(id json.RawMessage, e *Error) *Message {
	return &Message{JSONRPC: Version, ID: orNull(id), Error: appendErrorObject(nil, e)}
}

// NewRequest is a request; params may be nil.
func NewRequest(id json.RawMessage, method string, params json.RawMessage) *Message {
	return &Message{JSONRPC: Version, ID: id, Method: method, Params: params}
}

// IDKey is the canonical text of an id, which calls are matched by: a
// string's value, or a number's JSON text as sent (never through a
// float64, so no digit of a large id is lost). A peer that answers 7 to
// the request "7" still finds its call.
func IDKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) >= 2 && id[0] == '"' && bytes.IndexByte(id, '\\') < 0 {
		return string(id[1 : len(id)-1])
	}
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(id))
}

func hasID(id []byte) bool { return len(id) > 0 && string(id) != "null" }

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
