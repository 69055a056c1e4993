package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// startReferenceHTTP runs the Go SDK's reference server on streamable
// HTTP (stateless: the modern era, initialize answered too) and returns
// its URL.
func startReferenceHTTP(t *testing.T, reference string) string {
	t.Helper()
	port := freePort(t)
	ref := exec.Command(reference, "-http", fmt.Sprintf("127.0.0.1:%d", port))
	var refLog testenv.Buffer
	ref.Stderr = &refLog
	if err := ref.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Process.Kill(); ref.Wait() })
	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(refLog.String(), "listening") },
		"the reference server is not listening; its log:\n%s", &refLog)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// TestEraCommands: `mcpx list`, `mcpx call` and `mcpx servers` work
// against the Go SDK's reference server, which speaks both eras, over
// HTTP and over stdio, and against the fixture (legacy only). A server
// that speaks both is connected in the legacy era, which carries its
// server-initiated requests to mcpx's clients; after the probe over
// stdio the child is started again for initialize. (Modern-only servers
// are the conformance scenarios': TestConformanceClient.)
func TestEraCommands(t *testing.T) {
	reference := testenv.GoTool(t, goSDKServer)
	url := startReferenceHTTP(t, reference)
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"web":    map[string]any{"url": url},
		"stdio":  map[string]any{"command": reference},
		"legacy": fx("--name", "legacy"),
	}})

	out, errOut, code := runMCPX(t, "servers", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("servers: exit %d\n%s", code, errOut)
	}
	by := serversByName(t, out)
	for name, want := range map[string]string{"web": "2025-", "stdio": "2025-", "legacy": "2025-"} {
		if s := by[name]; !strings.HasPrefix(s.ProtocolVersion, want) {
			t.Errorf("%s: protocol %q (%s), want %s…", name, s.ProtocolVersion, s.Error, want)
		}
	}

	out, errOut, code = runMCPX(t, "list", "tools", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("list tools: exit %d\n%s", code, errOut)
	}
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("list tools --json: %v", err)
	}
	for _, name := range []string{"web_test_simple_text", "stdio_test_simple_text", "legacy_echo"} {
		if !slices.ContainsFunc(tools, func(tl struct{ Name string }) bool { return tl.Name == name }) {
			t.Errorf("list tools lacks %s", name)
		}
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"web_test_simple_text", `{}`, "This is a simple text response for testing."},
		{"stdio_test_simple_text", `{}`, "This is a simple text response for testing."},
		{"legacy_echo", `{"message":"hi"}`, "hi"},
	} {
		out, errOut, code := runMCPX(t, "call", tc.tool, tc.args, "--config", cfg)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("call %s: exit %d, output %q, want %q\n%s", tc.tool, code, out, tc.want, errOut)
		}
	}
}

// TestInputRequiredToLegacyClient: the reference server's MRTR
// elicitation tool, called by a legacy client of `mcpx serve --stdio`,
// reaches that client as one elicitation/create request, and its answer
// gets the client the tool's final result. (The reference server speaks
// both eras, so mcpx speaks legacy to it and the server asks by a
// request of its own; a modern-only server's input_required takes the
// path of the sep-2322 conformance scenario and TestInputRequired.)
func TestInputRequiredToLegacyClient(t *testing.T) {
	reference := testenv.GoTool(t, goSDKServer)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"ref": map[string]any{"command": reference, "prefix": ""},
	}})
	c := startServe(t, cfg)
	res, e := c.request("initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "legacy-client", "version": "1"},
	})
	if e != nil || res == nil {
		t.Fatalf("initialize: %+v", e)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"test_input_required_result_elicitation","arguments":{}}}`)

	var asked []string
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line := <-c.lines:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Message string `json:"message"`
				} `json:"params"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("not JSON: %s", line)
			}
			switch {
			case m.Method == "elicitation/create" && m.ID != nil:
				asked = append(asked, m.Params.Message)
				c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, m.ID))
			case string(m.ID) == `"call-1"`:
				if len(asked) != 1 || asked[0] != "What is your name?" {
					t.Errorf("the client was asked %q, want the server's one question", asked)
				}
				if !strings.Contains(string(m.Result), "Hello, Ada!") {
					t.Errorf("result %s %s, want the server's greeting with the client's answer", m.Result, m.Error)
				}
				return
			}
		case <-deadline:
			t.Fatalf("no answer to the call within 30s; asked %q", asked)
		}
	}
}
