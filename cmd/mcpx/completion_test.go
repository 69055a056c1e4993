package main

import (
	"os"
	"strings"
	"testing"
)

// runCached runs mcpx with the cache directory given, and returns its
// stdout; a non-zero exit fails the test.
func runCached(t *testing.T, cache string, args ...string) string {
	t.Helper()
	cmd := mcpxCommand(args...)
	cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpx %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func TestCompletionOfNames(t *testing.T) {
	pids := t.TempDir()
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx", "--pid-dir", pids)}})
	cache := t.TempDir()
	complete := func(args ...string) string {
		return runCached(t, cache, append([]string{"__complete", "--config", cfg}, args...)...)
	}

	// Nothing remembered yet: no names, and no server started to find some.
	if out := complete("call", ""); strings.Contains(out, "fx_") {
		t.Errorf("completion before any run offered %q", out)
	}
	if entries, _ := os.ReadDir(pids); len(entries) != 0 {
		t.Fatalf("completion started the server (%d pid files)", len(entries))
	}

	runCached(t, cache, "list", "tools", "--config", cfg) // connects once: the catalog is remembered
	started, _ := os.ReadDir(pids)

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"call", "fx_ec"}, []string{"fx_echo\tEchoes the message back"}},
		{[]string{"info", "fx_gr"}, []string{"fx_greet\t"}},
		{[]string{"get", ""}, []string{"fx_greet\t"}},
		{[]string{"read", "fixture://"}, []string{"fixture://items/{id}\t"}},
		{[]string{"list", "tools", "--server", ""}, []string{"fx\tstdio"}},
		{[]string{"disable", ""}, []string{"fx\tstdio"}},
	} {
		out := complete(tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(out, "\n"+w) && !strings.HasPrefix(out, w) {
				t.Errorf("__complete %s: no %q in\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
	}
	if out := complete("call", "fx_ec"); strings.Contains(out, "fx_greet") {
		t.Errorf("call completion offers prompts or names without the prefix:\n%s", out)
	}
	if now, _ := os.ReadDir(pids); len(now) != len(started) {
		t.Errorf("completion started servers: %d pid files, %d after the list", len(now), len(started))
	}
}
