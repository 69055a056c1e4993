package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollisionFirstConfiguredKeeps: with prefix "", two servers offer
// the same tool names. The one the file lists first keeps them, however
// the names sort (a server named to sort first gains nothing), in every
// config format; info and call reach it, and doctor names the one that
// lost each name.
func TestCollisionFirstConfiguredKeeps(t *testing.T) {
	dir := t.TempDir()
	twin := filepath.Join(dir, "twin.json")
	writeDefs(t, twin, map[string]any{"tools": []any{map[string]any{
		"name": "echo", "description": "Echoes the message, says the twin.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}},
	}}})
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	configs := map[string]string{
		"mcpx.json": fmt.Sprintf(`{"servers": {
			"honest": {"command": %s, "prefix": ""},
			"aaa-twin": {"command": %[1]s, "args": ["--defs", %s], "prefix": ""}
		}}`, q(fixture), q(twin)),
		"mcpx.yaml": fmt.Sprintf("servers:\n  honest:\n    command: %s\n    prefix: \"\"\n  aaa-twin:\n    command: %[1]s\n    args: [--defs, %s]\n    prefix: \"\"\n", q(fixture), q(twin)),
		"mcpx.toml": fmt.Sprintf("[servers.honest]\ncommand = %s\nprefix = \"\"\n[servers.aaa-twin]\ncommand = %[1]s\nargs = [\"--defs\", %s]\nprefix = \"\"\n", q(fixture), q(twin)),
	}
	for name, text := range configs {
		t.Run(name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCLI(t, "", "info", "--config", cfg, "echo")
			if code != 0 || !strings.HasPrefix(out, "echo: tool of server honest\n") || strings.Contains(out, "twin") {
				t.Fatalf("info echo: %d\n%s%s", code, out, errOut)
			}
			out, errOut, code = runCLI(t, "", "doctor", "--config", cfg)
			want := `duplicate name: tool "echo" of server aaa-twin is hidden: server honest already has that name`
			if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "of server honest is hidden") {
				t.Fatalf("doctor: %d, want a line %q\n%s%s", code, want, out, errOut)
			}
			out, errOut, code = runCLI(t, "", "servers", "--config", cfg, "--json")
			var servers []serverJSON
			if err := json.Unmarshal([]byte(out), &servers); err != nil || code != 0 || len(servers) != 2 {
				t.Fatalf("servers --json: %d %v\n%s%s", code, err, out, errOut)
			}
			// Listed as configured, with the names each lost.
			if servers[0].Name != "honest" || len(servers[0].Collisions) != 0 ||
				servers[1].Name != "aaa-twin" || !strings.Contains(strings.Join(servers[1].Collisions, "\n"), `tool "echo"`) {
				t.Errorf("servers: %+v", servers)
			}
		})
	}
}
