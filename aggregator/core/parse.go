package core

import (
	"encoding/json"
	"errors"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// ParseMessage reads the envelope of a JSON-RPC message in one scan, no
// decoding: params, result and error stay the bytes of line.
func ParseMessage(line []byte) (Message, error) {
	var m Message
	if !rawjson.Valid(line) {
		return m, json.Unmarshal(line, &m) // the syntax error, to answer with
	}
	env, err := jsonrpc.ReadEnvelope(line)
	if err != nil {
		return m, err
	}
	str := func(raw []byte, dst *string) bool {
		if raw == nil || string(raw) == "null" {
			return true
		}
		if v, ok := commonString(raw); ok {
			*dst = v
			return true
		}
		v, ok := rawjson.String(raw)
		*dst = v
		return ok
	}
	if !str(env.JSONRPC, &m.JSONRPC) || !str(env.Method, &m.Method) {
		return m, errors.New("jsonrpc and method must be strings")
	}
	m.ID, m.Params, m.Result, m.Error = env.ID, env.Params, env.Result, env.Error
	return m, nil
}

// commonString returns, without allocating it, a string that nearly every
// message carries (the version, a call's method) when raw is one of them
// as JSON; false for any other.
func commonString(raw []byte) (string, bool) {
	switch string(raw) { // compared in place: no conversion is made
	case `"2.0"`:
		return "2.0", true
	case `"tools/call"`:
		return "tools/call", true
	case `"notifications/cancelled"`:
		return "notifications/cancelled", true
	case `"notifications/progress"`:
		return "notifications/progress", true
	case `"ping"`:
		return "ping", true
	}
	return "", false
}
