package frame

import "github.com/mcpx/mcpx/rawjson"

// Envelope is the top level of a JSON-RPC message, each member the raw
// bytes of the line it was read from (nil when absent), nothing decoded.
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
func (e *Envelope) HasID() bool { return len(e.ID) > 0 && string(e.ID) != "null" }
