package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// doctor on a config with a missing command, a tool name clients reject and
// an inputSchema that is not JSON Schema, next to a sound npm server.
func TestDoctor(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"readyTimeout": "60s", "servers": map[string]any{
		"missing":    map[string]any{"command": "mcpx-no-such-command", "timeout": "5s"},
		"fx":         fx("--name", "fx", "--bad-tools"),
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "colour": "blue"},
	}})
	out, errOut, code := runCLI(t, "", "doctor", "--config", cfg)
	if code != 1 {
		t.Fatalf("doctor exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		`command "mcpx-no-such-command" not found on PATH`,
		"missing (stdio): failed",
		`tool name "bad name!" would be rejected by clients`,
		`mcpx serves it as "fx_bad_name_`,
		`tool "bad-schema": inputSchema is not valid JSON Schema`,
		"everything (stdio): ready",
		"servers.everything.colour: unknown key",
		"tools/list as a client receives it (expose proxy):",
		"verdict: 2 error(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `tool "echo"`) {
		t.Errorf("a sound tool was reported:\n%s", out)
	}

	out, _, code = runCLI(t, "", "doctor", "--json", "--config", cfg, "--expose", "direct")
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("doctor --json: %d %v\n%s", code, err, out)
	}
	if rep.Errors != 2 || rep.Bytes < 1000 || rep.Tokens != (rep.Bytes+3)/4 || len(rep.Servers) != 3 {
		t.Errorf("report: errors %d, bytes %d, tokens %d, %d servers", rep.Errors, rep.Bytes, rep.Tokens, len(rep.Servers))
	}
	// The measured size is what serve sends: compare with a real tools/list.
	c := startServe(t, cfg, "--expose", "direct")
	c.initialize()
	res, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatal(e.Message)
	}
	served := len(`{"jsonrpc":"2.0","id":1,"result":}`) + len(res)
	if served != rep.Bytes {
		t.Errorf("doctor says tools/list is %d bytes; serve sent %d", rep.Bytes, served)
	}

	// Names two servers share are warnings: exit 0.
	twins := writeConfig(t, map[string]any{"servers": map[string]any{
		"one": map[string]any{"command": fixture, "prefix": ""},
		"two": map[string]any{"command": fixture, "prefix": ""},
	}})
	out, errOut, code = runCLI(t, "", "doctor", "--config", twins)
	if code != 0 || !strings.Contains(out, `duplicate name: tool "echo" of server two is hidden: server one already has that name`) ||
		!strings.Contains(out, "verdict: usable, with 16 warning(s)") {
		t.Fatalf("doctor on twins: %d\n%s%s", code, out, errOut)
	}
	// A config that does not load: a verdict, exit 2 (a config error).
	broken := writeConfig(t, map[string]any{"servers": map[string]any{"x": map[string]any{"url": "ftp://x"}}})
	out, _, code = runCLI(t, "", "doctor", "--config", broken)
	if code != 2 || !strings.Contains(out, "servers.x.url") || !strings.Contains(out, "verdict: the config does not load") {
		t.Fatalf("doctor on a broken config: %d\n%s", code, out)
	}

	// A sound config: exit 0.
	good := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})
	out, errOut, code = runCLI(t, "", "doctor", "--config", good)
	if code != 0 || !strings.Contains(out, "verdict: all good") {
		t.Fatalf("doctor on a sound config: %d\n%s%s", code, out, errOut)
	}
}

// list --tokens adds each tool's estimated cost and the total; --cached
// reads the remembered catalogs without starting anything.
func TestListTokensAndCached(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	pids := t.TempDir()
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx", "--pid-dir", pids)}})
	out, errOut, code := runCLI(t, "", "list", "tools", "--tokens", "--config", cfg)
	if code != 0 {
		t.Fatalf("list --tokens: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n") // a pipe gets rows only
	if len(lines) != 10 || !strings.HasPrefix(lines[0], "fx_echo\t") {
		t.Fatalf("list --tokens:\n%s", out)
	}
	sum := 0
	for _, l := range lines {
		n, err := strconv.Atoi(strings.Split(l, "\t")[1])
		if err != nil || n <= 0 {
			t.Fatalf("row %q: tokens %v", l, err)
		}
		sum += n
	}
	if want := "total: 10 tools, about " + strconv.Itoa(sum) + " tokens"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q lacks %q", errOut, want)
	}
	out, _, _ = runCLI(t, "", "list", "tools", "--tokens", "--json", "--config", cfg)
	var tools []struct {
		Name   string `json:"name"`
		Tokens int    `json:"estimatedTokens"`
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil || len(tools) != 10 || tools[0].Tokens <= 0 {
		t.Fatalf("list --tokens --json: %v\n%s", err, out)
	}

	started := countFiles(t, pids)
	out, errOut, code = runCLI(t, "", "list", "tools", "--cached", "--config", cfg)
	if code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 10 || !strings.Contains(out, "fx_echo") {
		t.Fatalf("list --cached: %d\n%s%s", code, out, errOut)
	}
	if n := countFiles(t, pids); n != started {
		t.Errorf("list --cached started the server (%d starts, then %d)", started, n)
	}
	// Nothing remembered for a server never seen: no tools, no start.
	other := writeConfig(t, map[string]any{"servers": map[string]any{"new": fx("--name", "new", "--pid-dir", pids)}})
	out, _, _ = runCLI(t, "", "list", "tools", "--cached", "--config", other)
	if strings.Contains(out, "new_") || countFiles(t, pids) != started {
		t.Errorf("list --cached on a server never seen:\n%s", out)
	}
}

func countFiles(t testing.TB, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
