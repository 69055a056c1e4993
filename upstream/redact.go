package upstream

import (
	"bytes"
	"encoding/json"

	"github.com/mcpx/mcpx/rawjson"
)

// redactedError is an error whose text went through Options.Redact;
// errors.Is and errors.As still see the original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr is the one place where an upstream's failure is cleaned before
// it leaves the Client: a server may echo a header or env value in its
// error message or data, and a transport error may quote a URL with a
// key in it. Every caller, the MCP client, the proxy tool, `mcpx call`,
// gets the redacted text.
func (c *Client) redactErr(err error) error {
	if err == nil {
		return nil
	}
	if rpc, ok := err.(*RPCError); ok {
		out := &RPCError{Code: rpc.Code, Message: c.opts.Redact(rpc.Message), Data: rpc.Data}
		if len(rpc.Data) > 0 {
			out.Data = json.RawMessage(c.opts.Redact(string(rpc.Data)))
		}
		return out
	}
	msg := err.Error()
	if red := c.opts.Redact(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// redactResult cleans a result that reports a failure (a tool result with
// isError true), whose text is an error message that may echo a secret.
// Other results pass through untouched: a tool may return a configured
// value on purpose, and the hot path must not copy every result.
func (c *Client) redactResult(res json.RawMessage) json.RawMessage {
	if !reportsError(res) {
		return res
	}
	return json.RawMessage(c.opts.Redact(string(res)))
}

// reportsError reports whether a raw result has "isError": true. It scans
// for the key before anything else, and then reads only the envelope, so
// that a large result is never decoded.
func reportsError(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"isError"`)) {
		return false
	}
	v, _ := rawjson.Get(res, "isError") // anything but a true isError is not one
	return string(v) == "true"
}
