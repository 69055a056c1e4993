package jsonrpc

import "github.com/mcpx/mcpx/rawjson"

// Envelope is a [Message] found in one scan and left undecoded: each
// member the raw bytes of the line it was read from (nil when absent),
// the method still quoted. It is the hot path's view of a message; it
// aliases the line, so it lives no longer than the line's buffer.
type Envelope struct {
	JSONRPC, ID, Method, Params, Result, Error []byte
}

// ReadEnvelope finds a message's members in one scan of line, without
// decoding any of them (see package rawjson): a large result costs a
// pass over its bytes, nothing more. It fails when line is not one JSON
// object.
func ReadEnvelope(line []byte) (Envelope, error) {
	var e Envelope
	err := rawjson.Scan(line, func(k rawjson.Key, v []byte) bool {
		switch {
		case k.Is("jsonrpc"):
			e.JSONRPC = v
		case k.Is("id"):
			e.ID = v
		case k.Is("method"):
			e.Method = v
		case k.Is("params"):
			e.Params = v
		case k.Is("result"):
			e.Result = v
		case k.Is("error"):
			e.Error = v
		}
		return true
	})
	return e, err
}

// HasID reports whether the message has an id other than null: it is a
// request or a response, not a notification.
func (e *Envelope) HasID() bool { return hasID(e.ID) }

// HasError reports whether the message has an error member other than
// null.
func (e *Envelope) HasError() bool { return len(e.Error) > 0 && string(e.Error) != "null" }
