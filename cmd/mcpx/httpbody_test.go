package main

import (
	"strings"
	"testing"
)

// TestServeHTTPPrettyBody: a legacy session's POST body may be JSON
// pretty-printed over several lines: it is decoded as it came (no longer
// compacted first), and the call reaches a stdio upstream whole and is
// answered.
func TestServeHTTPPrettyBody(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx("--name", "fx")}})
	srv := startHTTP(t, cfg, nil)
	url := srv.url + "/mcp"
	s := openRaw(t, url)
	call := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 7,\n  \"method\": \"tools/call\",\n" +
		"  \"params\": {\n    \"name\": \"fx_echo\",\n    \"arguments\": {\"message\": \"over\\nlines\"}\n  }\n}\n"
	code, _, body := do(t, "POST", url, s.header("application/json"), call)
	if code != 200 || !strings.Contains(body, `"id":7`) || !strings.Contains(body, `over\nlines`) {
		t.Fatalf("pretty-printed call: %d %s", code, body)
	}
}
