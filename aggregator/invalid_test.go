package aggregator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
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
	// The second use of id 8 must come while the first is in flight:
	// once the source has it.
	testenv.Eventually(t, 5*time.Second, func() bool { return len(src.received()) > 0 },
		"the first call never reached the source")
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
	c := build([]*member{mem(src, "")}, "_", nil, nil)
	if len(c.Tools) != 1 || c.Tools[0].Original != "right" {
		t.Fatalf("tools = %v, want only \"right\"", c.Tools)
	}
	if len(c.Problems) != 1 || !strings.Contains(c.Problems[0], `no "name"`) {
		t.Errorf("problems = %v, want one naming the missing name", c.Problems)
	}
}

// TestServeExposeProxy: with expose proxy the client sees the proxy tool
// and the always-listed (browser) tools; other upstream tools are not
// callable directly, only through the proxy.
func TestServeExposeProxy(t *testing.T) {
	up := &fakeSource{name: "up", tools: raws(t, `{"name":"echo","inputSchema":{"type":"object"}}`)}
	br := &fakeSource{name: "browser", tools: raws(t, `{"name":"navigate","inputSchema":{"type":"object"}}`)}
	answer := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil
	}
	up.setRequest(answer)
	br.setRequest(answer)
	c := serve(t, &member{src: br, prefix: "browser", direct: true}, mem(up, "up"))
	c.a.cfg.Expose = config.ExposeProxy
	c.initialize()

	list := c.call(1, "tools/list", nil)
	for _, want := range []string{`"proxy"`, `"browser_navigate"`} {
		if !strings.Contains(string(list.Result), want) {
			t.Errorf("tools/list lacks %s: %s", want, list.Result)
		}
	}
	if strings.Contains(string(list.Result), `"up_echo"`) {
		t.Errorf("expose proxy listed an upstream tool: %s", list.Result)
	}
	if r := c.call(2, "tools/call", map[string]any{"name": "up_echo"}); r.Error != nil || !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), `tool \"up_echo\" is served through the \"proxy\" tool`) {
		t.Errorf("a tool the client was not shown: %s", r.line)
	}
	if r := c.call(3, "tools/call", map[string]any{"name": "browser_navigate"}); r.Error != nil {
		t.Errorf("an always-listed tool: %s", r.line)
	}
	r := c.call(4, "tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{"action": "call", "type": "tool", "path": "up_echo"}})
	if r.Error != nil || !strings.Contains(string(r.Result), `"proxyPath":"up_echo"`) {
		t.Errorf("through the proxy: %s", r.line)
	}
}
