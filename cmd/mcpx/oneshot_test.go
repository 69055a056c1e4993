package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestOneShotStartsOnlyOwner: `call`, `info`, `get`, `read` and
// `list --server S` start only the server that owns what they ask for,
// as the remembered catalog says (the servers one and many have no
// prefix, so only their catalogs tell them apart) or, with nothing
// remembered, the prefix; every server writes its pid into a directory
// of its own at start, and stderr names none of the others (crash, which
// fails at start, used to get a line). A name that the server its
// prefix points to lacks, or no prefix tells, starts every server.
func TestOneShotStartsOnlyOwner(t *testing.T) {
	dirs := map[string]string{}
	server := func(name string, extra map[string]any, args ...string) map[string]any {
		dirs[name] = t.TempDir()
		s := fx(append([]string{"--name", name, "--pid-dir", dirs[name]}, args...)...)
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"a":     server("a", nil),
		"b":     server("b", nil),
		"one":   server("one", map[string]any{"prefix": "", "tools": map[string]any{"allow": []string{"echo"}}, "prompts": map[string]any{"deny": []string{"*"}}}),
		"many":  server("many", map[string]any{"prefix": "", "tools": map[string]any{"allow": []string{"gen-*"}}, "prompts": map[string]any{"deny": []string{"*"}}}, "--tools", "2"),
		"crash": server("crash", nil, "--exit-at-start", "3", "--stderr", "cannot open the database"),
	}})
	cache := "XDG_CACHE_HOME=" + t.TempDir()
	run := func(args ...string) (string, string, int) {
		t.Helper()
		for _, d := range dirs {
			clearDir(t, d)
		}
		cmd := mcpxCommand(append(args, "--config", cfg)...)
		cmd.Env = append(cmd.Env, cache)
		var stderr testenv.Buffer
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		return string(out), stderr.String(), cmd.ProcessState.ExitCode()
	}
	startedServers := func() []string {
		var names []string
		for name, d := range dirs {
			if entries, _ := os.ReadDir(d); len(entries) > 0 {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		return names
	}
	check := func(want []string, args ...string) {
		t.Helper()
		out, errOut, code := run(args...)
		if code != 0 {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr:\n%s", args, code, out, errOut)
		}
		if got := startedServers(); !slices.Equal(got, want) {
			t.Errorf("%v started %q, want only %q\nstderr:\n%s", args, got, want, errOut)
		}
		for name := range dirs {
			if !slices.Contains(want, name) && strings.Contains(errOut, "server "+name) {
				t.Errorf("%v: stderr has a line about server %s, which it does not need:\n%s", args, name, errOut)
			}
		}
	}

	// Nothing remembered yet: the prefix says a, and the servers with
	// none both may have gen-0001.
	check([]string{"a"}, "call", "a_echo", `{"message":"hi"}`)
	check([]string{"many", "one"}, "call", "gen-0001")

	// A first full run remembers every catalog.
	if _, errOut, _ := run("list", "tools"); !strings.Contains(errOut, "server crash failed") {
		t.Fatalf("list tools does not say crash failed:\n%s", errOut)
	}
	check([]string{"many"}, "call", "gen-0001")
	check([]string{"one"}, "call", "echo", `{"message":"hi"}`)
	check([]string{"b"}, "call", "b_echo", `{"message":"hi"}`)
	check([]string{"b"}, "info", "b_echo")
	check([]string{"a"}, "get", "a_greet", "--arg", "name=Ada")
	check([]string{"b"}, "list", "tools", "--server", "b")
	out, _, _ := run("list", "resources", "--json")
	var resources []struct{ URI, Server string }
	if err := json.Unmarshal([]byte(out), &resources); err != nil {
		t.Fatalf("list resources --json: %v\n%s", err, out)
	}
	var readmeOwner []string
	for _, r := range resources {
		if r.URI == "fixture://readme" {
			readmeOwner = []string{r.Server}
		}
	}
	check(readmeOwner, "read", "fixture://readme")

	// The prefix points to b, whose live catalog lacks the name: every
	// server is started to find it, and, not found, the failed one is
	// named (it might have had it).
	_, errOut, code := run("call", "b_nothing")
	if code != 2 || len(startedServers()) != len(dirs) || !strings.Contains(errOut, "server crash failed") {
		t.Errorf("call b_nothing: exit %d, started %q; want 2, all, and a line about crash:\n%s", code, startedServers(), errOut)
	}
	// A server the call needs failed: it says so.
	_, errOut, code = run("call", "crash_echo")
	if code == 0 || !slices.Equal(startedServers(), []string{"crash"}) || !strings.Contains(errOut, "exit status 3") {
		t.Errorf("call crash_echo: exit %d, started %q; want a failure naming crash's exit status:\n%s", code, startedServers(), errOut)
	}
}

// clearDir empties dir.
func clearDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOneShotQuietAboutOthers: when neither a remembered catalog nor a
// prefix tells which server has a name (here a server's own name for its
// tool), every server is started, but once the name is found, stderr
// says nothing about the others, not even that one failed.
func TestOneShotQuietAboutOthers(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"a":     fx("--name", "a"),
		"crash": map[string]any{"command": fixture, "args": []string{"--exit-at-start", "3"}},
	}})
	out, errOut, code := runMCPX(t, "call", "structured", "--config", cfg)
	if code != 0 || !strings.Contains(out, "sum") {
		t.Fatalf("call structured: exit %d, stdout %q\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "crash") {
		t.Errorf("call structured: stderr is about crash, which has nothing to do with it:\n%s", errOut)
	}
	// The name found nowhere, the failed server matters: it might have had it.
	_, errOut, code = runMCPX(t, "call", "nothing", "--config", cfg)
	if code != 2 || !lineWith(errOut, "server crash failed", "exit status 3") {
		t.Errorf("call nothing: exit %d, want 2 and a line saying crash failed:\n%s", code, errOut)
	}
}
