package main

import (
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
