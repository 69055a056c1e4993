package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConfigAt writes cfg as JSON to path.
func writeConfigAt(t *testing.T, path string, cfg any) {
	t.Helper()
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func serversByName(t *testing.T, out string) map[string]serverJSON {
	t.Helper()
	var got []serverJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("servers --json: %v\n%s", err, out)
	}
	by := map[string]serverJSON{}
	for _, s := range got {
		by[s.Name] = s
	}
	return by
}

// TestSelfEntrySkipped: --config pointing at a client config that holds
// the entry starting mcpx (this binary, or npx @mcpx/mcpx) does not start
// mcpx again: the entry is skipped with a warning that says why, and the
// other servers work. An mcpx entry that names another config is a real
// nested mcpx and runs.
func TestSelfEntrySkipped(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	client := filepath.Join(dir, "claude_desktop_config.json")
	other := filepath.Join(dir, "other.json")
	writeConfigAt(t, other, map[string]any{"servers": map[string]any{"inner": fx()}})
	runMain := map[string]string{runMainEnv: "1"}
	writeConfigAt(t, client, map[string]any{"mcpServers": map[string]any{
		"mcpx":   map[string]any{"command": self, "args": []string{"serve", "--stdio", "--config", client}, "env": runMain},
		"viaNpx": map[string]any{"command": "npx", "args": []string{"-y", "@mcpx/mcpx@1.2.3", "serve", "--stdio"}},
		"nested": map[string]any{"command": self, "args": []string{"serve", "--stdio", "--config=" + other}, "env": runMain, "timeout": "10s"},
		"fx":     fx(),
	}})
	out, errOut, code := runCLI(t, "", "servers", "--json", "--config", client)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	by := serversByName(t, out)
	for _, name := range []string{"mcpx", "viaNpx"} {
		if s := by[name]; s.State != "disabled" {
			t.Errorf("%s: %+v, want disabled (skipped)", name, s)
		}
		if !strings.Contains(errOut, "servers."+name+": skipped: it starts mcpx itself") {
			t.Errorf("no warning saying why %s was skipped:\n%s", name, errOut)
		}
	}
	if s := by["fx"]; s.State != "ready" {
		t.Errorf("fx: %+v, want ready", s)
	}
	if s := by["nested"]; s.State != "ready" || s.Server != "mcpx" || s.Tools != 1 {
		t.Errorf("nested (another config): %+v, want a ready mcpx with the proxy tool", s)
	}
}

// TestRecursionDepthBounded: a loop the entry check cannot see (mcpx
// behind sh -c) stops at the depth limit. Each mcpx in the chain starts
// one fixture that records its pid: depths 0, 1 and 2 start one each,
// depth 3 starts none and says why, so exactly three ever ran.
func TestRecursionDepthBounded(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	cfg := filepath.Join(dir, "loop.json")
	writeConfigAt(t, cfg, map[string]any{"readyTimeout": "60s", "mcpServers": map[string]any{
		"loop": map[string]any{"command": "sh", "args": []string{"-c", `exec "$0" serve --stdio --config "$1"`, self, cfg},
			"env": map[string]string{runMainEnv: "1"}, "timeout": "20s"},
		"fx": fx("--pid-dir", pids),
	}})
	out, errOut, code := runCLI(t, "", "servers", "--json", "--log-level", "info", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s := serversByName(t, out)["loop"]; s.State != "ready" {
		t.Errorf("loop: %+v, want ready (the nested mcpx serves)", s)
	}
	// The deepest mcpx's warning travels up as each level logs its
	// child's stderr.
	if !strings.Contains(errOut, "runs 3 deep under other mcpx processes (MCPX_DEPTH=3, the limit)") {
		t.Errorf("no warning from the mcpx at the depth limit:\n%s", errOut)
	}
	entries, err := os.ReadDir(pids)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("%d fixtures ran in the chain, want 3 (depths 0, 1, 2)", len(entries))
	}
	if alive := pidsAlive(t, pids); len(alive) != 0 {
		t.Errorf("fixtures still running after mcpx servers returned: %v", alive)
	}
}
