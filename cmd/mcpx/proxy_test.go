package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// proxyResult is a CallToolResult of the proxy tool, read raw: the
// TypeScript SDK would drop the annotation keys and contentType checked here.
type proxyResult struct {
	Content []struct {
		Type        string         `json:"type"`
		Text        string         `json:"text"`
		Annotations map[string]any `json:"annotations"`
		Meta        map[string]any `json:"_meta"`
		Resource    struct {
			URI         string  `json:"uri"`
			MimeType    string  `json:"mimeType"`
			ContentType *string `json:"contentType"`
			Text        string  `json:"text"`
			Blob        string  `json:"blob"`
		} `json:"resource"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
	Meta              map[string]any `json:"_meta"`
}

func (c *rawClient) proxy(t *testing.T, args string) proxyResult {
	t.Helper()
	raw, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": json.RawMessage(args)})
	if e != nil {
		t.Fatalf("proxy %s: JSON-RPC error %d %s (a bad argument must be a tool result)", args, e.Code, e.Message)
	}
	var r proxyResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("proxy %s: %v", args, err)
	}
	return r
}

// TestServeProxyTool drives the proxy tool through `mcpx serve --stdio`
// with raw JSON-RPC against server-everything and the Go fixture.
func TestServeProxyTool(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"readyTimeout": "60s", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
		"fx":         fx("--name", "fx"),
	}})
	c := startServe(t, cfg)
	c.initialize()

	res, _ := c.request("tools/list", map[string]any{})
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	json.Unmarshal(res, &list)
	if len(list.Tools) != 1 || list.Tools[0].Name != "proxy" || list.Tools[0].InputSchema["additionalProperties"] != false {
		t.Fatalf("with the default expose, tools/list = %s; want only the strict proxy tool", res)
	}

	t.Run("list with query", func(t *testing.T) {
		r := c.proxy(t, `{"action":"list","type":"tool","query":"echo"}`)
		// One embedded resource, then the page in words for the model.
		if len(r.Content) != 2 || r.Content[0].Resource.URI != "proxy:list/tool" || r.Content[1].Type != "text" {
			t.Fatalf("got %+v", r)
		}
		var items []struct{ Name string }
		json.Unmarshal([]byte(r.Content[0].Resource.Text), &items)
		if len(items) == 0 || !strings.HasSuffix(items[0].Name, "_echo") {
			t.Errorf("query echo: first item %v, want an echo tool", items)
		}
		a := r.Content[0].Annotations
		if a["pythonType"] != "Tool" || a["objectType"] != "Tool" || a["many"] != true || a["isArray"] != true || a["proxyAction"] != "list" {
			t.Errorf("annotations = %v", a)
		}
	})
	t.Run("list paging and filter", func(t *testing.T) {
		r := c.proxy(t, `{"action":"list","type":"tool","filter_server":"everything","limit":5,"offset":2}`)
		a := r.Content[0].Annotations
		var items []struct{ Name string }
		json.Unmarshal([]byte(r.Content[0].Resource.Text), &items)
		if len(items) != 5 || a["totalCount"].(float64) < 13 || a["offset"] != 2.0 || a["limit"] != 5.0 {
			t.Errorf("got %d items, annotations %v", len(items), a)
		}
		for _, it := range items {
			if !strings.HasPrefix(it.Name, "everything_") {
				t.Errorf("filter_server everything returned %s", it.Name)
			}
		}
	})
	t.Run("info", func(t *testing.T) {
		r := c.proxy(t, `{"action":"info","type":"tool","path":"fx_echo"}`)
		if r.Content[0].Resource.URI != "proxy:info/tool/fx_echo" || r.Content[0].Annotations["proxyPath"] != "fx_echo" {
			t.Errorf("info = %+v", r.Content[0])
		}
		var tool map[string]any
		json.Unmarshal([]byte(r.Content[0].Resource.Text), &tool)
		if tool["x-tool-extra"] != true || tool["inputSchema"].(map[string]any)["x-custom"] != 42.0 {
			t.Errorf("info lost upstream fields: %v", tool)
		}
	})
	t.Run("call tool keeps annotations and meta", func(t *testing.T) {
		r := c.proxy(t, `{"action":"call","type":"tool","path":"fx_echo","args":{"message":"hi"}}`)
		a := r.Content[0].Annotations
		if r.Content[0].Text != "hi" || a["proxyType"] != "tool" || a["proxyAction"] != "call" || a["proxyPath"] != "fx_echo" ||
			a["x-fixture"] != "kept" || a["priority"] != 0.5 || r.Meta["fixture/result"] != "meta-kept" || r.Content[0].Meta["fixture/item"] != 1.0 {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("call tool isError and structuredContent", func(t *testing.T) {
		if r := c.proxy(t, `{"action":"call","type":"tool","path":"fx_fail"}`); !r.IsError || r.Content[0].Text != "fixture failure: as requested" {
			t.Errorf("fail = %+v", r)
		}
		if r := c.proxy(t, `{"action":"call","type":"tool","path":"fx_structured"}`); r.StructuredContent["sum"] != 3.0 {
			t.Errorf("structured = %+v", r)
		}
		if r := c.proxy(t, `{"action":"call","type":"tool","path":"everything_get-sum","args":{"a":2,"b":3}}`); !strings.Contains(r.Content[0].Text, "5") {
			t.Errorf("get-sum = %+v", r)
		}
	})
	t.Run("objectification", func(t *testing.T) {
		for _, tc := range []struct {
			uri, mime   string
			contentType string // "" means absent
			blob        bool
		}{
			{"fixture://text-json", "application/json", "text/plain", false},
			{"fixture://json", "application/json", "", false},
			{"fixture://readme", "text/markdown", "", false},
			{"fixture://blob", "application/octet-stream", "", true},
			{"fixture://items/7", "application/json", "", false},
		} {
			r := c.proxy(t, fmt.Sprintf(`{"action":"call","type":"resource","path":%q}`, tc.uri))
			if len(r.Content) != 1 {
				t.Fatalf("%s: %+v", tc.uri, r)
			}
			it := r.Content[0]
			ct := ""
			if it.Resource.ContentType != nil {
				ct = *it.Resource.ContentType
			}
			if it.Type != "resource" || it.Resource.MimeType != tc.mime || ct != tc.contentType || (it.Resource.Blob != "") != tc.blob ||
				it.Annotations["proxyType"] != "resource" || it.Annotations["proxyPath"] != tc.uri {
				t.Errorf("%s: got %+v", tc.uri, it)
			}
		}
	})
	t.Run("prompt", func(t *testing.T) {
		r := c.proxy(t, `{"action":"call","type":"prompt","path":"fx_greet","args":{"name":"Ada"}}`)
		if r.Content[0].Resource.URI != "proxy:fx_greet" || r.Content[0].Annotations["pythonType"] != "GetPromptResult" ||
			!strings.Contains(r.Content[0].Resource.Text, "Ada") {
			t.Errorf("prompt = %+v", r)
		}
	})
	t.Run("errors", func(t *testing.T) {
		for args, want := range map[string]string{
			`{"action":"info","type":"tool"}`:                      "Parameter 'path' is required for action 'info'",
			`{"action":"list","type":"tool","args":{"a":1}}`:       "Parameter 'args' should not be provided for action 'list'",
			`{"action":"list","type":"tool","path":"x"}`:           "Parameter 'path' should not be provided for action 'list'",
			`{"action":"call","type":"tool","path":"x","limit":3}`: "Parameters 'limit', 'offset', and 'filter_server' are only allowed for 'list' action",
			`{"action":"call","type":"tool","path":"nope"}`:        "Unknown tool: 'nope'",
			`{"action":"info","type":"prompt","path":"nope"}`:      "Prompt 'nope' not found",
			`{"action":"lst","type":"tool"}`:                       "lst",
		} {
			r := c.proxy(t, args)
			if !r.IsError || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, want) {
				t.Errorf("%s: got %+v, want isError with %q", args, r, want)
			}
		}
	})
}

// TestServeProxyProgressAndCancel: progress and cancellation pass through
// a proxy call to server-everything's long-running tool.
func TestServeProxyProgressAndCancel(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
	}})
	c := startServe(t, cfg, "--log-level", "debug")
	c.initialize()
	c.request("tools/list", map[string]any{})

	long := `{"action":"call","type":"tool","path":"everything_trigger-long-running-operation","args":{"duration":%d,"steps":%d}}`
	c.send(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"proxy","arguments":` +
		fmt.Sprintf(long, 1, 3) + `,"_meta":{"progressToken":"client-tok"}}}`)
	var progress int
	deadline := time.After(20 * time.Second)
wait:
	for {
		select {
		case line := <-c.lines:
			var m struct {
				ID     string `json:"id"`
				Method string `json:"method"`
				Params struct {
					ProgressToken any `json:"progressToken"`
				} `json:"params"`
			}
			json.Unmarshal(line, &m)
			if m.Method == "notifications/progress" {
				if m.Params.ProgressToken != "client-tok" {
					t.Errorf("progress with token %v, want the client's", m.Params.ProgressToken)
				}
				progress++
			}
			if m.ID == "p" {
				break wait
			}
		case <-deadline:
			t.Fatal("no answer to the proxy call")
		}
	}
	if progress != 3 {
		t.Errorf("got %d progress notifications before the answer, want 3", progress)
	}

	c.send(`{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"proxy","arguments":` +
		fmt.Sprintf(long, 10, 10) + `,"_meta":{"progressToken":"tok-q"}}}`)
	// Cancel once the call is surely running: after its first progress.
	first := time.After(20 * time.Second)
	for !hasLine(c.stdoutLines(), `"tok-q"`) {
		select {
		case <-c.lines:
		case <-first:
			t.Fatal("no progress for the long call")
		}
	}
	before := len(c.stdoutLines())
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"q"}}`)
	testenv.Eventually(t, 10*time.Second, func() bool { return strings.Contains(c.stderr.String(), "cancelled upstream request") },
		"mcpx did not cancel the upstream request:\n%s", c.stderr)
	if !strings.Contains(c.stderr.String(), "id=mcpx-") {
		t.Errorf("the upstream cancel should carry mcpx's own request id:\n%s", c.stderr.String())
	}
	// A fence: another long call on the same server, whose answer comes
	// after two of the server's 1s progress ticks. Progress for q, had it
	// gone on, would have come by then.
	c.send(`{"jsonrpc":"2.0","id":"fence","method":"tools/call","params":{"name":"proxy","arguments":` +
		fmt.Sprintf(long, 2, 2) + `}}`)
	fence := time.After(20 * time.Second)
	for !hasLine(c.stdoutLines(), `"id":"fence"`) {
		select {
		case <-c.lines:
		case <-fence:
			t.Fatal("no answer to the fence call")
		}
	}
	afterCancel := 0
	for i, line := range c.stdoutLines() {
		if strings.Contains(string(line), `"id":"q"`) {
			t.Errorf("the cancelled call was answered: %s", line)
		}
		if i >= before && strings.Contains(string(line), `"tok-q"`) {
			afterCancel++
		}
	}
	// One may have been on its way as the cancel was sent.
	if afterCancel > 1 {
		t.Errorf("%d progress notifications for the call after it was cancelled; they must stop", afterCancel)
	}
}

// hasLine reports whether any line contains s.
func hasLine(lines [][]byte, s string) bool {
	for _, l := range lines {
		if strings.Contains(string(l), s) {
			return true
		}
	}
	return false
}
