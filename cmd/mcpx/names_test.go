package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// everythingConfig is a config with server-everything under the name
// "everything", and with fx the Go fixture as "fx" beside it.
func everythingConfig(t *testing.T, fixtureToo bool) string {
	t.Helper()
	servers := map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{requireEverything(t)}, "timeout": "20s"},
	}
	if fixtureToo {
		servers["fx"] = fx("--name", "fx")
	}
	return writeConfig(t, map[string]any{"servers": servers})
}

func TestCallNames(t *testing.T) {
	cfg := everythingConfig(t, true)

	// An original name that one server has resolves as proxy resolves it.
	out, errOut, code := runCLI(t, "", "call", "get-sum", `{"a":2,"b":3}`, "--config", cfg)
	if code != 0 || !strings.Contains(out, "5") {
		t.Errorf("call get-sum: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// An original name two servers have (both have echo) is ambiguous: the
	// error names both, and it is a usage error.
	_, errOut, code = runCLI(t, "", "call", "echo", `{"message":"hi"}`, "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "everything_echo (server everything)") || !strings.Contains(errOut, "fx_echo (server fx)") {
		t.Errorf("call echo with two echo tools: exit %d, stderr %q; want 2 naming both", code, errOut)
	}

	// A name nothing has: exit 2 with the closest names.
	_, errOut, code = runCLI(t, "", "call", "get-summ", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, `unknown tool "get-summ"; did you mean everything_get-sum`) {
		t.Errorf("call get-summ: exit %d, stderr %q; want 2 and a suggestion", code, errOut)
	}
}

func TestListUnknownServer(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx(), "other": fx()}})
	out, errOut, code := runCLI(t, "", "list", "tools", "--server", "nosuch", "--config", cfg)
	if code != 2 || out != "" || !strings.Contains(errOut, `no server "nosuch"; the servers are fx, other`) {
		t.Errorf("list --server nosuch: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestUsageExitStatus(t *testing.T) {
	for _, args := range [][]string{
		{"nosuch"},
		{"list"},
		{"list", "tools", "--no-such-flag"},
		{"call", "x", "not json"},
		{"call"},
	} {
		if _, errOut, code := runCLI(t, "", args...); code != 2 || !strings.HasPrefix(errOut, "mcpx: ") {
			t.Errorf("mcpx %s: exit %d, stderr %q; want 2 and the reason", strings.Join(args, " "), code, errOut)
		}
	}
}

// TestCleanedServerName: a server named "my server" offers my_server_echo
// (an underscore alone makes the name valid) in the terminal and to a
// client; only when a server named "my_server" also has echo does the
// cleaned name get a hash, and the valid name stays with its owner.
func TestCleanedServerName(t *testing.T) {
	toolNames := func(t *testing.T, cfg string) map[string]string {
		t.Helper()
		out, errOut, code := runCLI(t, "", "list", "tools", "--json", "--config", cfg)
		if code != 0 {
			t.Fatalf("list tools: exit %d: %s", code, errOut)
		}
		var tools []struct{ Name, Server string }
		if err := json.Unmarshal([]byte(out), &tools); err != nil {
			t.Fatalf("list tools --json: %v\n%s", err, out)
		}
		byName := map[string]string{}
		for _, tl := range tools {
			byName[tl.Name] = tl.Server
		}
		return byName
	}

	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"my server": fx("--name", "spaced")}})
	if got := toolNames(t, cfg); got["my_server_echo"] != "my server" {
		t.Errorf("tools = %v, want my_server_echo of server \"my server\"", got)
	}
	out, errOut, code := runCLI(t, "", "call", "my_server_echo", `{"message":"hi"}`, "--config", cfg)
	if code != 0 || !strings.Contains(out, "hi") {
		t.Errorf("call my_server_echo: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	c := startServe(t, cfg)
	c.initialize()
	if names := c.listToolNames(); !slices.Contains(names, "my_server_echo") {
		t.Errorf("a client's tools/list = %v, want my_server_echo", names)
	}
	res, e := c.request("tools/call", map[string]any{"name": "my_server_echo", "arguments": map[string]string{"message": "from a client"}})
	if e != nil || !strings.Contains(string(res), "from a client") || strings.Contains(string(res), `"isError":true`) {
		t.Errorf("tools/call my_server_echo = %s %+v", res, e)
	}

	cfg = writeConfig(t, map[string]any{"servers": map[string]any{
		"my server": fx("--name", "spaced"),
		"my_server": fx("--name", "plain"),
	}})
	got := toolNames(t, cfg)
	if got["my_server_echo"] != "my_server" {
		t.Errorf("tools = %v, want my_server_echo of server my_server", got)
	}
	hashed := ""
	for name, server := range got {
		if server == "my server" && strings.HasPrefix(name, "my_server_echo_") {
			hashed = name
		}
	}
	if len(hashed) != len("my_server_echo_")+6 {
		t.Fatalf("tools = %v, want my_server_echo_<6 hex digits> of server \"my server\"", got)
	}
	if out, errOut, code := runCLI(t, "", "call", hashed, `{"message":"hashed"}`, "--config", cfg); code != 0 || !strings.Contains(out, "hashed") {
		t.Errorf("call %s: exit %d, stdout %q, stderr %q", hashed, code, out, errOut)
	}
}

// TestReadAndGetByNameOrTitle: list resources shows each resource's name
// and title in columns of their own; read takes the URI, the name or the
// title, get takes a prompt's name or title, and a near miss of any of
// them gets the closest names, as a tool's does.
func TestReadAndGetByNameOrTitle(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})

	out, errOut, code := runCLI(t, "", "list", "resources", "--config", cfg)
	if code != 0 {
		t.Fatalf("list resources: exit %d: %s", code, errOut)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if !slices.Contains(rows, "fixture://text-json\tfx\ttext-json\tJSON as plain text\t") ||
		!slices.Contains(rows, "fixture://readme\tfx\treadme\t\t") {
		t.Errorf("list resources rows = %q, want URI, server, name, title, description", rows)
	}

	const text = `{"key":"value","n":1}` + "\n"
	for _, arg := range []string{"fixture://text-json", "text-json", "JSON as plain text"} {
		if out, errOut, code := runCLI(t, "", "read", arg, "--config", cfg); code != 0 || out != text {
			t.Errorf("read %q: exit %d, stdout %q, stderr %q; want %q", arg, code, out, errOut, text)
		}
	}
	out, errOut, code = runCLI(t, "", "get", "Greeting", "--arg", "name=Ada", "--config", cfg)
	if code != 0 || !strings.Contains(out, "Please greet Ada") {
		t.Errorf("get Greeting: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"read", "raedme"}, []string{"did you mean fixture://readme?"}},
		{[]string{"read", "JSON as plain txt"}, []string{"did you mean ", "fixture://text-json"}},
		{[]string{"get", "Greating"}, []string{"did you mean fx_greet?"}},
		{[]string{"read", "item"}, []string{`"item" is the resource template fixture://items/{id}: give a URI it matches`}},
	} {
		out, errOut, code := runCLI(t, "", append(tc.args, "--config", cfg)...)
		if code != 2 || out != "" || !containsAll(errOut, tc.want...) {
			t.Errorf("mcpx %q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
