package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestServeSlowServers: a server slow to connect does not hold up the
// first tools/list (it answers with the servers that are ready, and the
// slow one is announced later with list_changed); a call to a tool of a
// server still connecting waits for it and succeeds; a call to a tool of
// a server that never connects, or failed, says "server X is not
// connected" with the reason, not "unknown tool".
func TestServeSlowServers(t *testing.T) {
	// readyTimeout leaves the fast server time to connect on a loaded
	// machine and ends before the slow ones can have.
	cfg := writeConfig(t, map[string]any{"expose": "both", "readyTimeout": "6s", "servers": map[string]any{
		"fast":   fx(),
		"slow":   map[string]any{"command": fixture, "args": []string{"--init-delay", "10s"}, "timeout": "30s"},
		"slower": map[string]any{"command": fixture, "args": []string{"--init-delay", "8s"}, "timeout": "30s"},
		"hung":   map[string]any{"command": fixture, "args": []string{"--hang-init"}, "timeout": "3s"},
		"broken": map[string]any{"command": fixture, "args": []string{"--exit-at-start", "3"}, "timeout": "5s"},
	}})
	c := startServe(t, cfg)
	c.initialize()

	// The first list comes before the slow servers have connected: it
	// has the fast server's tools and none of theirs.
	list, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatalf("tools/list: %s", e.Message)
	}
	names := toolNamesOf(t, list)
	if !contains(names, "fast_echo") {
		t.Errorf("the first list lacks the fast server's tools: %v", names)
	}
	if contains(names, "slow_echo") || contains(names, "slower_echo") {
		t.Errorf("the first list waited for a slow server: %v", names)
	}

	// A call to a tool of a server still connecting waits for it.
	res, e := c.request("tools/call", map[string]any{"name": "slower_echo", "arguments": map[string]any{"message": "waited"}})
	if e != nil || !strings.Contains(string(res), `"waited"`) || strings.Contains(string(res), `"isError":true`) {
		t.Errorf("slower_echo while connecting: %s %+v, want the echo", res, e)
	}

	// A server that never answers initialize: after its timeout, the
	// reason, not "unknown tool".
	res, e = c.request("tools/call", map[string]any{"name": "hung_echo", "arguments": map[string]any{"message": "x"}})
	if e != nil || !strings.Contains(string(res), "server hung is not connected: initialize: no answer within 3s") || !strings.Contains(string(res), `"isError":true`) {
		t.Errorf("hung_echo: %s %+v, want an isError result naming the server and the reason", res, e)
	}
	res, e = c.request("tools/call", map[string]any{"name": "broken_echo", "arguments": map[string]any{"message": "x"}})
	if e != nil || !strings.Contains(string(res), "server broken is not connected:") || !strings.Contains(string(res), "exit status 3") {
		t.Errorf("broken_echo: %s %+v, want the server's exit in the error", res, e)
	}
	// A name no server could own is still unknown.
	if res, e := c.request("tools/call", map[string]any{"name": "fast_nope"}); e != nil || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "unknown tool") {
		t.Errorf("fast_nope: %s %+v, want an isError result: unknown tool", res, e)
	}
	// Through the proxy tool too.
	res, _ = c.request("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{"action": "call", "type": "tool", "path": "hung_echo", "args": map[string]any{"message": "x"}}})
	if !strings.Contains(string(res), "server hung is not connected") {
		t.Errorf("proxy call of hung_echo: %s", res)
	}

	// The slow server is announced when it arrives.
	if !c.waitNotification("notifications/tools/list_changed", 30*time.Second) {
		t.Fatal("no tools/list_changed after the slow servers connected")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, _ = c.request("tools/list", map[string]any{})
		if contains(toolNamesOf(t, list), "slow_echo") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slow_echo never appeared: %v", toolNamesOf(t, list))
		}
		c.waitNotification("notifications/tools/list_changed", time.Second)
	}
}

func toolNamesOf(t *testing.T, list json.RawMessage) []string {
	t.Helper()
	var l struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		t.Fatalf("tools/list result: %v: %s", err, list)
	}
	var names []string
	for _, x := range l.Tools {
		names = append(names, x.Name)
	}
	return names
}

// TestCallFailedServerSaysWhy: `mcpx call` of a tool whose server failed
// names the server and its error instead of "unknown tool".
func TestCallFailedServerSaysWhy(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"broken": fx("--exit-at-start", "3"),
		"ok":     fx(),
	}})
	_, errOut, code := runCLI(t, "", "call", "--config", cfg, "broken_echo", `{"message":"x"}`)
	if code != 1 || !strings.Contains(errOut, "server broken is not connected: initialize: process exit status 3") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 naming the server and its exit", code, errOut)
	}
	_, errOut, _ = runCLI(t, "", "call", "--config", cfg, "ok_nope")
	if !strings.Contains(errOut, `unknown tool "ok_nope"`) {
		t.Errorf("a name no failed server owns: %s", errOut)
	}
}
