package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// saveByRename writes a config the way many editors save: a new file
// renamed over the old one.
func saveByRename(t testing.TB, path string, cfg any) {
	t.Helper()
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	saveBytesByRename(t, path, b)
}

func saveBytesByRename(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".mcpx.json.swp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// listToolNames asks mcpx for tools/list and returns the names.
func (c *rawClient) listToolNames() []string {
	c.t.Helper()
	res, e := c.request("tools/list", map[string]any{})
	if e != nil {
		c.t.Fatalf("tools/list: %s", e.Message)
	}
	var r struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		c.t.Fatalf("tools/list result %s: %v", res, err)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// waitStderr waits until mcpx's stderr contains every one of parts on one
// line.
func (c *rawClient) waitStderr(d time.Duration, parts ...string) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		for _, line := range strings.Split(c.stderr.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no stderr line with %q within %s; stderr:\n%s", parts, d, c.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitResponse waits for the response to a request sent with send.
func (c *rawClient) waitResponse(id string, d time.Duration) json.RawMessage {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, line := range c.stdoutLines() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == id {
				return line
			}
		}
		select {
		case line := <-c.lines: // all holds every line; notes the notifications
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method != "" && len(m.ID) == 0 {
				c.mu.Lock()
				c.notes = append(c.notes, line)
				c.mu.Unlock()
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
	c.t.Fatalf("no response to id %s within %s; stderr:\n%s", id, d, c.stderr.String())
	return nil
}

// stop closes mcpx's stdin and waits for it to exit.
func (c *rawClient) stop() {
	c.t.Helper()
	c.stdin.Close()
	if !waitExit(c.cmd, 15*time.Second) {
		c.t.Fatal("mcpx did not exit after stdin closed")
	}
}

// With expose proxy, tools/list holds the proxy tool only and is answered
// before any upstream is up: here before a server stuck in initialize has
// even timed out.
func TestServeProxyListNeedsNoUpstream(t *testing.T) {
	everything := requireEverything(t)
	gate := filepath.Join(t.TempDir(), "never")
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"stuck":      map[string]any{"command": fixture, "args": []string{"--init-gate", gate}, "timeout": "4s"},
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
	}})
	c := startServe(t, cfg)
	c.initialize()
	names := c.listToolNames()
	if !slices.Equal(names, []string{"proxy"}) {
		t.Fatalf("tools = %v, want [proxy]", names)
	}
	if strings.Contains(c.stderr.String(), "connect failed") {
		t.Fatalf("tools/list waited for the stuck server to time out; stderr:\n%s", c.stderr.String())
	}
	// The stuck server does time out later, as it should.
	c.waitStderr(20*time.Second, "stuck", "connect failed")
}

// A second start answers tools/list from the remembered catalogs before
// any upstream is up; a call to a server still starting waits for it; a
// live list that differs from the remembered one brings list_changed.
func TestServeRemembersCatalog(t *testing.T) {
	everything := requireEverything(t)
	dir := t.TempDir()
	cache := []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	gate := filepath.Join(dir, "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]any{"readyTimeout": "60s", "expose": "direct", "servers": map[string]any{
		"fx":         map[string]any{"command": fixture, "args": []string{"--init-gate", gate}, "timeout": "60s"},
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "timeout": "60s"},
	}})

	first := startServeEnv(t, cfg, cache)
	first.initialize()
	live := first.listToolNames()
	for _, want := range []string{"fx_echo", "fx_fail", "everything_echo"} {
		if !slices.Contains(live, want) {
			t.Fatalf("first run: %s missing from %v", want, live)
		}
	}
	first.stop()

	// Make the remembered fx catalog differ from what fx will list: drop
	// its fail tool.
	files, _ := filepath.Glob(filepath.Join(dir, "cache", "mcpx", "fx-*.json"))
	if len(files) != 1 {
		t.Fatalf("remembered files for fx: %v", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rem map[string]any
	if err := json.Unmarshal(raw, &rem); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, tool := range rem["tools"].([]any) {
		if tool.(map[string]any)["name"] != "fail" {
			kept = append(kept, tool)
		}
	}
	rem["tools"] = kept
	raw, _ = json.Marshal(rem)
	if err := os.WriteFile(files[0], raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gate); err != nil { // fx now hangs in initialize
		t.Fatal(err)
	}

	second := startServeEnv(t, cfg, cache)
	second.initialize()
	remembered := second.listToolNames()
	if !slices.Contains(remembered, "fx_echo") || slices.Contains(remembered, "fx_fail") || !slices.Contains(remembered, "everything_echo") {
		t.Fatalf("second run, before fx is up: %v; want the remembered fx tools (no fx_fail) and everything's", remembered)
	}
	second.send(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"patience"}}}`)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	resp := second.waitResponse(`"call"`, 30*time.Second)
	if !strings.Contains(string(resp), "patience") || strings.Contains(string(resp), `"isError":true`) {
		t.Fatalf("call to a starting server: %s", resp)
	}
	if !second.waitNotification("notifications/tools/list_changed", 20*time.Second) {
		t.Fatal("no tools/list_changed after the live list differed from the remembered one")
	}
	if names := second.listToolNames(); !slices.Contains(names, "fx_fail") {
		t.Fatalf("after fx came up: %v", names)
	}
}

// A lazy server is listed from what it remembers, started on its first
// call, and with idleTimeout stopped again and woken by the next call;
// mcpx servers shows it sleeping.
func TestServeLazyAndIdle(t *testing.T) {
	everything := requireEverything(t)
	dir := t.TempDir()
	cache := []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	pids := t.TempDir()
	cfg := writeConfig(t, map[string]any{"readyTimeout": "60s", "expose": "direct", "servers": map[string]any{
		"fx":         map[string]any{"command": fixture, "args": []string{"--pid-dir", pids}, "lazy": true},
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "idleTimeout": "500ms"},
	}})
	c := startServeEnv(t, cfg, cache)
	c.initialize()
	// Nothing remembered yet: fx is started once to learn its tools...
	if names := c.listToolNames(); !slices.Contains(names, "fx_echo") || !slices.Contains(names, "everything_echo") {
		t.Fatalf("tools = %v", names)
	}
	// ...and stopped when idle: its process is gone.
	testenv.Eventually(t, 20*time.Second, func() bool { return len(pidsAlive(t, pids)) == 0 }, "fx still running after learning")
	// everything has no call in flight for its idleTimeout.
	c.waitStderr(20*time.Second, "everything", "stopped while idle")

	for _, call := range []struct{ name, id string }{{"fx_echo", "1001"}, {"everything_echo", "1002"}} {
		c.send(`{"jsonrpc":"2.0","id":` + call.id + `,"method":"tools/call","params":{"name":"` + call.name + `","arguments":{"message":"up"}}}`)
		resp := c.waitResponse(call.id, 30*time.Second)
		if !strings.Contains(string(resp), "up") || strings.Contains(string(resp), `"isError":true`) {
			t.Fatalf("%s after sleeping: %s", call.name, resp)
		}
	}
	c.waitStderr(5*time.Second, "everything", "starting on demand")
	if entries, _ := os.ReadDir(pids); len(entries) != 2 {
		t.Errorf("fx started %d times, want 2 (learn, then the call)", len(entries))
	}
	c.stop()

	// A terminal command shows the lazy server sleeping, from its
	// remembered catalog, without starting it.
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	out, errOut, code := runCLI(t, "", "servers", "--json", "--config", cfg)
	var servers []serverJSON
	if err := json.Unmarshal([]byte(out), &servers); err != nil || code != 0 {
		t.Fatalf("servers: %d %v\n%s\n%s", code, err, out, errOut)
	}
	for _, s := range servers {
		if s.Name == "fx" && (s.State != "sleeping" || s.Tools < 10) {
			t.Errorf("fx: %+v, want sleeping with its remembered tools", s)
		}
	}
	if entries, _ := os.ReadDir(pids); len(entries) != 2 {
		t.Errorf("mcpx servers started the lazy server (%d starts)", len(entries))
	}
}

// serve reloads its config when an editor saves it by rename: the changed
// server restarts, the added one starts, the untouched ones are not
// disturbed; a config that does not parse is kept out; SIGHUP reloads.
func TestServeReloadsConfig(t *testing.T) {
	everything := requireEverything(t)
	pa, pb, pc := t.TempDir(), t.TempDir(), t.TempDir()
	servers := map[string]any{
		"a":          fx("--pid-dir", pa),
		"b":          fx("--pid-dir", pb),
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
	}
	doc := map[string]any{"readyTimeout": "60s", "expose": "direct", "servers": servers}
	cfg := writeConfig(t, doc)
	c := startServe(t, cfg)
	c.initialize()
	before := c.listToolNames()
	if !slices.Contains(before, "a_echo") || !slices.Contains(before, "everything_echo") || slices.Contains(before, "b_gen-0000") {
		t.Fatalf("tools = %v", before)
	}
	aPids := pidsAlive(t, pa)

	servers["b"] = fx("--pid-dir", pb, "--tools", "2")
	servers["c"] = fx("--pid-dir", pc)
	// A new prefix changes only how a is shown: it is not restarted.
	servers["a"] = map[string]any{"command": fixture, "args": []string{"--pid-dir", pa}, "timeout": "5s", "prefix": "alpha"}
	saveByRename(t, cfg, doc)
	if !c.waitNotification("notifications/tools/list_changed", 20*time.Second) {
		t.Fatalf("no list_changed after the config changed; stderr:\n%s", c.stderr.String())
	}
	c.waitStderr(5*time.Second, "config reloaded", "added", "changed")
	testenv.Eventually(t, 20*time.Second, func() bool {
		names := c.listToolNames()
		return slices.Contains(names, "b_gen-0001") && slices.Contains(names, "c_echo") &&
			slices.Contains(names, "alpha_echo") && !slices.Contains(names, "a_echo")
	}, "the changed and added servers' tools did not appear")
	if got := pidsAlive(t, pa); !slices.Equal(got, aPids) {
		t.Errorf("untouched server a was disturbed: pids %v, then %v", aPids, got)
	}
	if entries, _ := os.ReadDir(pa); len(entries) != 1 {
		t.Errorf("untouched server a started %d times", len(entries))
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		entries, _ := os.ReadDir(pb)
		return len(entries) == 2 && len(pidsAlive(t, pb)) == 1
	}, "changed server b was not restarted exactly once")

	// A config that does not parse is reported and kept out.
	saveBytesByRename(t, cfg, []byte(`{"servers": {"a": {"command": }`))
	c.waitStderr(10*time.Second, "config reload failed", "line 1")
	if names := c.listToolNames(); !slices.Contains(names, "c_echo") || !slices.Contains(names, "alpha_echo") {
		t.Fatalf("after an invalid config: %v", names)
	}
	// The watcher lives on: removing c works.
	delete(servers, "c")
	saveByRename(t, cfg, doc)
	testenv.Eventually(t, 20*time.Second, func() bool { return !slices.Contains(c.listToolNames(), "c_echo") },
		"removed server c is still listed")
	testenv.Eventually(t, 10*time.Second, func() bool { return len(pidsAlive(t, pc)) == 0 }, "removed server c still runs")

	// SIGHUP reloads too.
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	c.waitStderr(10*time.Second, "no server changed")
	if got := pidsAlive(t, pa); !slices.Equal(got, aPids) {
		t.Errorf("server a was disturbed along the way: pids %v, then %v", aPids, got)
	}
}

// TestServeReloadCarriesSession: a server restarted by a config change is
// set to the session's log level and asked for its resource subscriptions
// again, and a server the change adds is set to the level too.
func TestServeReloadCarriesSession(t *testing.T) {
	servers := map[string]any{"b": fx("--name", "b")}
	doc := map[string]any{"expose": "direct", "servers": servers}
	cfg := writeConfig(t, doc)
	c := startServe(t, cfg)
	c.initialize()
	for _, r := range []struct{ method, params string }{
		{"logging/setLevel", `{"level":"debug"}`},
		{"resources/subscribe", `{"uri":"fx://kept"}`},
	} {
		if _, rpcErr := c.request(r.method, json.RawMessage(r.params)); rpcErr != nil {
			t.Fatalf("%s: %+v", r.method, rpcErr)
		}
	}
	lines := func(parts ...string) int {
		n := 0
		for _, line := range strings.Split(c.stderr.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				n++
			}
		}
		return n
	}
	c.waitStderr(10*time.Second, "resources/subscribe", "fx://kept")

	servers["b"] = fx("--name", "b", "--tools", "1") // changed: restarted
	servers["c"] = fx("--name", "c")                 // added
	saveByRename(t, cfg, doc)
	testenv.Eventually(t, 20*time.Second, func() bool {
		return lines("resources/subscribe", "fx://kept") == 2 && lines("logging/setLevel", "debug") == 3
	}, "after the reload, the new b was not asked for the subscription and the level, or c for the level")
}
