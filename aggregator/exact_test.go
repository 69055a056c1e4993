package aggregator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestServeEchoesIDsExactly: every answer carries the request's id byte
// for byte, whoever answers: mcp-go (initialize, ping, an unknown method),
// mcpx itself (lists, errors) or an upstream. A number beyond 2^53 used to
// come back rounded from initialize and ping.
func TestServeEchoesIDsExactly(t *testing.T) {
	src := &fakeSource{name: "s", tools: raws(t, `{"name":"echo","inputSchema":{"type":"object"}}`)}
	src.setRequest(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	})
	c := serve(t, mem(src, "s"))
	c.a.cfg.Expose = "direct"
	ids := []string{`9007199254740993`, `-9007199254740993`, `1.50`, `1e3`, `123456789012345678901234567890`, `"\u0041b"`, `"x\"y"`}
	for i, id := range ids {
		var line string
		switch i {
		case 0:
			line = `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		}
		if line != "" {
			checkID(t, c, line, id, "initialize")
			c.notify("notifications/initialized", nil)
		}
		for _, m := range []struct{ method, params string }{
			{"ping", `{}`},
			{"tools/list", `{}`},
			{"tools/call", `{"name":"s_echo"}`},
			{"tools/call", `{"name":"nope"}`},
			{"no/such/method", `{}`},
			{"logging/setLevel", `{"level":"info"}`},
		} {
			checkID(t, c, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+m.method+`","params":`+m.params+`}`, id, m.method+" "+m.params)
		}
	}
}

// checkID sends a request, waits for the next answer (requests go one at
// a time) and checks that its id is exactly id.
func checkID(t *testing.T, c *stdioClient, line, id, what string) {
	t.Helper()
	c.mu.Lock()
	before := map[string]int{}
	for k, r := range c.responses {
		before[k] = len(r)
	}
	c.mu.Unlock()
	c.send(line)
	msg, ok := c.waitFor(5*time.Second, func() (rpcMsg, bool) {
		for k, r := range c.responses {
			if len(r) > before[k] {
				return r[len(r)-1], true
			}
		}
		return rpcMsg{}, false
	})
	if !ok {
		t.Fatalf("%s with id %s: no answer", what, id)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(msg.line, &fields); err != nil {
		t.Fatal(err)
	}
	if got := string(fields["id"]); got != id {
		t.Errorf("%s: answered with id %s, want %s byte for byte: %s", what, got, id, msg.line)
	}
}

// TestServeRejectsInvalidJSONRPC: an id that is an object, an array or a
// boolean, and a message with both a method and a result, are invalid
// requests (-32600, id null when the id cannot be echoed); a bogus log
// level is invalid params (-32602); a request before initialize is
// refused, not served, while ping is allowed.
func TestServeRejectsInvalidJSONRPC(t *testing.T) {
	src := &fakeSource{name: "s", tools: raws(t, `{"name":"echo","inputSchema":{"type":"object"}}`)}
	src.setRequest(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	})
	c := serve(t, mem(src, "s"))
	c.a.cfg.Expose = "direct"

	// Before initialize.
	if r := c.call(1, "tools/list", nil); r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "initialize") {
		t.Errorf("tools/list before initialize: %s, want -32600 naming initialize", r.line)
	}
	if r := c.call(2, "tools/call", map[string]any{"name": "s_echo"}); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("tools/call before initialize: %s, want -32600", r.line)
	}
	if len(src.received()) != 0 {
		t.Errorf("a request before initialize reached the upstream: %v", src.received())
	}
	if r := c.call(3, "ping", nil); r.Error != nil {
		t.Errorf("ping before initialize: %s, want an answer", r.line)
	}
	c.initialize()

	for i, line := range []string{
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":false,"method":"tools/list"}`,
	} {
		c.send(line)
		if r := c.awaitNth(nil, i, 5*time.Second); r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("%s: got %s, want -32600 with id null", line, r.line)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":10,"method":"ping","result":{}}`)
	if r := c.await(10, 5*time.Second); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("method and result: got %s, want -32600", r.line)
	}
	for i, level := range []any{"verbose", "", 3, "INFO"} {
		if r := c.call(20+i, "logging/setLevel", map[string]any{"level": level}); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "warning") {
			t.Errorf("logging/setLevel %v: got %s, want -32602 listing the levels", level, r.line)
		}
	}
	if r := c.call(30, "logging/setLevel", map[string]any{"level": "warning"}); r.Error != nil {
		t.Errorf("logging/setLevel warning: %s", r.line)
	}
}
