package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// call sends one request on a raw session and returns the JSON answer.
func (s *rawSession) call(body string) string {
	s.t.Helper()
	code, _, out := do(s.t, "POST", s.url, s.header("application/json"), body)
	if code != 200 {
		s.t.Fatalf("POST %s: %d %s", body, code, out)
	}
	return out
}

// TestServeHTTPPerSession: a perSession server runs once per session,
// with its own state (a tool one session adds is not the other's), beside
// a shared server that runs once; ending a session stops its instance.
func TestServeHTTPPerSession(t *testing.T) {
	memDir, sharedDir := t.TempDir(), t.TempDir()
	mem := fx("--name", "mem", "--pid-dir", memDir)
	mem["perSession"] = true
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"mem": mem,
		"fx":  fx("--name", "fx", "--pid-dir", sharedDir),
	}})
	srv := startHTTP(t, cfg, nil)
	url := srv.url + "/mcp"

	a, b := openRaw(t, url), openRaw(t, url)
	waitPidFiles(t, memDir, 2)
	for _, s := range []*rawSession{a, b} {
		for _, tool := range []string{"mem_echo", "fx_echo"} {
			if out := s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"message":"hi"}}}`); !strings.Contains(out, "hi") {
				t.Fatalf("%s: %s", tool, out)
			}
		}
	}
	if n := len(pidsAlive(t, sharedDir)); n != 1 {
		t.Errorf("shared server instances: %d, want 1", n)
	}
	if n := len(pidsAlive(t, memDir)); n != 2 {
		t.Errorf("perSession server instances: %d, want 2", n)
	}

	// State is the session's own: a tool added in a is not in b.
	a.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mem_add-tool","arguments":{"name":"mine"}}}`)
	testenv.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(a.call(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`), `"mem_mine"`)
	}, "session a never listed its added tool mem_mine")
	if list := b.call(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); strings.Contains(list, `"mem_mine"`) || !strings.Contains(list, `"mem_echo"`) {
		t.Errorf("session b sees session a's instance: %s", list)
	}

	// Ending a session stops its instance, and only its.
	do(t, "DELETE", url, a.header("application/json"), "")
	testenv.Eventually(t, 10*time.Second, func() bool { return len(pidsAlive(t, memDir)) == 1 },
		"ending session a did not stop its instance")
	if out := b.call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mem_echo","arguments":{"message":"still"}}}`); !strings.Contains(out, "still") {
		t.Errorf("session b after a ended: %s", out)
	}
}

// TestServeHTTPPerSessionWaitsForShared: a session's call to a shared
// server's tool waits for that server while it is still connecting, as a
// call without perSession servers does, instead of answering "unknown
// tool" because the session's own servers were ready first.
func TestServeHTTPPerSessionWaitsForShared(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	mem := fx("--name", "mem")
	mem["perSession"] = true
	shared := fx("--name", "fx", "--init-gate", gate)
	shared["timeout"] = "30s"
	cfg := writeConfig(t, map[string]any{"expose": "direct", "readyTimeout": "100ms", "servers": map[string]any{
		"mem": mem,
		"fx":  shared,
	}})
	srv := startHTTP(t, cfg, nil)
	s := openRaw(t, srv.url+"/mcp")
	// The shared server answers initialize only once the gate exists,
	// which is after the call below was sent (unless this machine takes
	// longer than the pause to send it: then the test proves nothing, but
	// still passes only with the right answer).
	opened := time.AfterFunc(300*time.Millisecond, func() { os.WriteFile(gate, nil, 0o600) })
	defer opened.Stop()
	out := s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"hi"}}}`)
	if !strings.Contains(out, `"hi"`) || strings.Contains(out, "isError") {
		t.Fatalf("fx_echo while fx connects: %s", out)
	}
}
