package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/scan"
)

// TestScanReferenceServers: the scanner finds nothing in the tools of the
// reference servers (server-everything, -filesystem, -memory,
// -sequential-thinking) and of the fixture: none is withheld at first
// sight, and doctor flags none.
func TestScanReferenceServers(t *testing.T) {
	peers := testenv.NeedNodePeers(t)
	js := func(name string) string {
		return filepath.Join(peers, "node_modules", "@modelcontextprotocol", name, "dist", "index.js")
	}
	dir := t.TempDir()
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"every": map[string]any{"command": "node", "args": []string{js("server-everything")}},
		"fs":    map[string]any{"command": "node", "args": []string{js("server-filesystem"), dir}},
		"mem":   map[string]any{"command": "node", "args": []string{js("server-memory")}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		"think": map[string]any{"command": "node", "args": []string{js("server-sequential-thinking")}},
		"fx":    fx("--name", "fx"),
	}})
	env := trustEnv(t.TempDir(), "pin")
	out, errOut, code := runPinned(t, env, "list", "tools", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("list tools: exit %d\n%s", code, errOut)
	}
	var tools []json.RawMessage
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("list tools --json: %v\n%s", err, out)
	}
	serverOf := func(name string) string { return strings.SplitN(name, "_", 2)[0] }
	names := &scan.Names{}
	for _, raw := range tools {
		var tool struct{ Name string }
		_ = json.Unmarshal(raw, &tool)
		names.Add(serverOf(tool.Name), tool.Name)
		names.Add(serverOf(tool.Name), strings.SplitN(tool.Name, "_", 2)[1])
	}
	servers := map[string]int{}
	for _, raw := range tools {
		var tool struct{ Name string }
		_ = json.Unmarshal(raw, &tool)
		servers[serverOf(tool.Name)]++
		if fs := scan.Capability(raw, serverOf(tool.Name), names); len(fs) > 0 {
			t.Errorf("%s: %v", tool.Name, fs)
		}
	}
	for _, s := range []string{"every", "fs", "mem", "think", "fx"} {
		if servers[s] == 0 {
			t.Errorf("no tools of %s listed: %v", s, servers)
		}
	}
	t.Logf("%d tools scanned: %v", len(tools), servers)

	out, _, _ = runPinned(t, env, "doctor", "--config", cfg)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "withheld") || strings.Contains(line, `tool "`) && strings.Contains(line, " in ") {
			t.Errorf("doctor: %s", line)
		}
	}
}
