package config

import (
	"reflect"
	"testing"
)

// TestServerOrder: every format keeps the order its file writes the
// servers in, whatever way the format has to write them.
func TestServerOrder(t *testing.T) {
	want := []string{"zeta", "alpha", "mid"}
	for _, tc := range []struct{ file, data string }{
		{"mcpx.json", `{"servers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"command": "m"}}}`},
		{"mcp.json", `{
			// VS Code's file: comments and trailing commas
			"inputs": [{"id": "x", "nested": {"servers": {"decoy": {}}}}],
			"servers": {
				"zeta": {"command": "z", "args": ["{", "}"]},
				"alpha": {"command": "a", "env": {"K": "v"}},
			},
			"mcpServers": {"mid": {"command": "m"},},
		}`},
		{"mcpx.yaml", `
servers:
  zeta: {command: z}
  alpha:
    command: a
mcpServers:
  mid: &m
    command: m
`},
		{"mcpx.yaml", `
base: &s
  zeta: {command: z}
  alpha: {command: a}
  mid: {command: m}
servers: *s
`},
		{"mcpx.toml", `
[servers.zeta]
command = "z"
[servers.alpha]
command = "a"
[mcpServers.mid]
command = "m"
`},
		{"mcpx.toml", `
[servers]
zeta.command = "z"
alpha = { command = "a" }
[servers.mid]
command = "m"
`},
		{"mcpx.toml", "servers.zeta.command = \"z\"\nservers.alpha.command = \"a\"\nmcpServers.mid.command = \"m\"\n"},
		{"mcpx.toml", `servers = { zeta = { command = "z" }, alpha = { command = "a" }, mid = { command = "m" } }`},
	} {
		cfg, err := Parse(tc.file, []byte(tc.data), nil)
		if err != nil {
			t.Errorf("%s %s: %v", tc.file, tc.data, err)
			continue
		}
		var got []string
		for _, s := range cfg.Servers {
			got = append(got, s.Name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s:\nservers %q, want %q", tc.file, tc.data, got, want)
		}
	}
}

// TestOrderNamesFallback: a name the ordered reader missed still comes
// back, after the ordered ones and sorted, so nothing is lost.
func TestOrderNamesFallback(t *testing.T) {
	m := map[string]int{"c": 1, "b": 2, "a": 3, "d": 4}
	if got, want := orderNames(m, []string{"d", "x", "b"}), []string{"d", "b", "a", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("orderNames = %q, want %q", got, want)
	}
}
