package aggregator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestServeInvalidRequests: JSON that is not a request gets -32600, an id
// reused while in flight is refused, and a source answering nothing still
// gets the client an answer.
func TestServeInvalidRequests(t *testing.T) {
	release := make(chan struct{})
	src := &fakeSource{name: "s", tools: raws(t, `{"name":"slow","inputSchema":{"type":"object"}}`, `{"name":"empty","inputSchema":{"type":"object"}}`)}
	src.setRequest(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if strings.Contains(string(params), `"slow"`) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return json.RawMessage(`{"content":[]}`), nil
		}
		return nil, nil
	})
	c := serve(t, mem(src, "s"))
	c.initialize()
	defer close(release)

	for i, line := range []string{`[]`, `42`, `null`} {
		c.send(line)
		if r := c.awaitNth(nil, i, 5*time.Second); r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("%s: got %s, want -32600", line, r.line)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":7}`)
	if r := c.await(7, 5*time.Second); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("id without method: got %s, want -32600", r.line)
	}

	c.request(8, "tools/call", map[string]any{"name": "s_slow"})
	time.Sleep(100 * time.Millisecond)
	c.request(8, "tools/call", map[string]any{"name": "s_slow"})
	if r := c.await(8, 5*time.Second); r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "in flight") {
		t.Errorf("reused id: got %s, want -32600 naming the clash", r.line)
	}

	if r := c.call(9, "tools/call", map[string]any{"name": "s_empty"}); r.Error == nil || r.Error.Code != -32603 {
		t.Errorf("a source answering nothing: got %s, want -32603", r.line)
	}
}

// TestBuildExactKeys: only the key "name" names a tool; "Name" does not.
func TestBuildExactKeys(t *testing.T) {
	src := &fakeSource{name: "s", tools: raws(t, `{"Name":"wrong","inputSchema":{"type":"object"}}`, `{"name":"right","NAME":"other","inputSchema":{"type":"object"}}`)}
	c := build([]*member{mem(src, "")}, "_")
	if len(c.Tools) != 1 || c.Tools[0].Original != "right" {
		t.Fatalf("tools = %v, want only \"right\"", c.Tools)
	}
	if len(c.Problems) != 1 || !strings.Contains(c.Problems[0], `no "name"`) {
		t.Errorf("problems = %v, want one naming the missing name", c.Problems)
	}
}
