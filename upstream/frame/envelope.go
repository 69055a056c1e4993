package frame

import "github.com/mcpx/mcpx/jsonrpc"

// Envelope is [jsonrpc.Envelope], named here for the aggregator's stdio
// loop until it reads envelopes from package jsonrpc itself.
type Envelope = jsonrpc.Envelope

// ReadEnvelope is [jsonrpc.ReadEnvelope].
func ReadEnvelope(line []byte) (Envelope, error) { return jsonrpc.ReadEnvelope(line) }
