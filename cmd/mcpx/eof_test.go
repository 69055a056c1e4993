package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// pipeServe runs mcpx serve --stdio on requests piped in whole, stdin
// closed after the last (printf ... | mcpx serve --stdio), and returns
// the answers by id, once mcpx has exited with status 0. Any stdout line
// that is not a JSON-RPC response fails the test.
func pipeServe(t *testing.T, cfg string, requests ...string) map[string]json.RawMessage {
	t.Helper()
	cmd := mcpxCommand("serve", "--stdio", "--config", cfg)
	cmd.Stdin = strings.NewReader(strings.Join(requests, "\n") + "\n")
	var stdout, stderr testenv.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitExit(cmd, 60*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("mcpx did not exit within 60s of stdin EOF; stderr:\n%s", stderr.String())
	}
	t.Logf("mcpx exited %s after it started", time.Since(start).Round(time.Millisecond))
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("mcpx exited %d, want 0; stderr:\n%s", code, stderr.String())
	}
	answers := map[string]json.RawMessage{}
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(stdout.String())), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(line, &m); err != nil || len(m.ID) == 0 {
			t.Errorf("stdout line is not a response: %s", truncateForLog(line))
			continue
		}
		answers[string(m.ID)] = append(json.RawMessage(nil), line...)
	}
	return answers
}

const pipedInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`

// TestServePipedRequests: requests piped to serve --stdio with stdin
// closed after the last are all answered before mcpx exits, as any MCP
// server answers them, including a call that must wait for its server to
// start.
func TestServePipedRequests(t *testing.T) {
	t.Parallel()
	// shutdownTimeout 20s leaves the answers up to 16s: far more than
	// the fixture needs to start, even on a loaded machine.
	cfg := writeConfig(t, map[string]any{"shutdownTimeout": "20s", "expose": "both",
		"servers": map[string]any{"fx": fx()}})
	answers := pipeServe(t, cfg, pipedInitialize,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"piped"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	for id, want := range map[string]string{"1": `"serverInfo"`, "2": `"fx_echo"`, "3": "piped", "4": `"result":{}`} {
		if a, ok := answers[id]; !ok || !bytes.Contains(a, []byte(want)) {
			t.Errorf("answer to request %s: %s, want one holding %s", id, truncateForLog(a), want)
		}
	}
}

// TestServePipedRequestsBounded: a piped call that does not end within
// shutdownTimeout is cancelled unanswered; the others are answered, and
// mcpx exits with status 0.
func TestServePipedRequestsBounded(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"shutdownTimeout": "1s", "expose": "both",
		"servers": map[string]any{"fx": fx()}})
	answers := pipeServe(t, cfg, pipedInitialize,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx_sleep","arguments":{"ms":600000}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	for _, id := range []string{"1", "3"} {
		if _, ok := answers[id]; !ok {
			t.Errorf("request %s was not answered", id)
		}
	}
	if a, ok := answers["2"]; ok {
		t.Errorf("the call that outlived shutdownTimeout was answered: %s", a)
	}
}
