package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
)

// hungReadyCrash is a config with a hung server (never answers
// initialize, whose timeout a command that waited for it would reach),
// the npm reference server (ready in a second or two) and a server that
// exits at start.
func hungReadyCrash(t *testing.T) string {
	t.Helper()
	return writeConfig(t, map[string]any{"servers": map[string]any{
		"hung": map[string]any{"command": fixture, "args": []string{"--hang-init", "--stderr", "loading model weights"},
			"timeout": "60s"},
		"everything": map[string]any{"command": "node", "args": []string{requireEverything(t)}, "timeout": "60s"},
		"crash":      map[string]any{"command": fixture, "args": []string{"--exit-at-start", "3", "--stderr", "cannot open the database"}},
	}})
}

// runMCPX runs the built mcpx with stdin empty and returns stdout, stderr
// and the exit status.
func runMCPX(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := mcpxCommand(args...)
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mcpx %v: %v", args, err)
	}
	return string(out), stderr.String(), code
}

// TestWaitOnlyForNeeded: `call NAME` and `list --server S` start and
// wait for the server involved only. The hung server beside it is never
// started, so nothing on stderr is about it (it used to get a line
// saying it was still starting), nor about the crashing one; asked for
// itself, the crashing server gets a line with its exit status. In a
// pipe there is no spinner.
func TestWaitOnlyForNeeded(t *testing.T) {
	cfg := hungReadyCrash(t)

	out, errOut, code := runMCPX(t, "call", "everything_echo", `{"message":"only what is needed"}`, "--config", cfg)
	if code != 0 || !strings.Contains(out, "only what is needed") {
		t.Fatalf("call: exit %d, stdout %q\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "server hung") || strings.Contains(errOut, "server crash") {
		t.Errorf("call: stderr is about servers it does not need:\n%s", errOut)
	}
	if strings.Contains(errOut, "\r") || strings.Contains(errOut, "to start (") {
		t.Errorf("call drew a spinner on a pipe:\n%q", errOut)
	}

	out, errOut, code = runMCPX(t, "list", "tools", "--server", "everything", "--config", cfg)
	if code != 0 || !strings.Contains(out, "everything_echo\teverything\t") {
		t.Fatalf("list --server everything: exit %d, stdout %q\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "server hung") || strings.Contains(errOut, "server crash") {
		t.Errorf("list --server: stderr is about servers it does not need:\n%s", errOut)
	}

	// Only the crashing server is waited for: its line has the exit status.
	_, errOut, _ = runMCPX(t, "list", "tools", "--server", "crash", "--config", cfg)
	if !lineWith(errOut, "mcpx: server crash failed: ", "exit status 3") {
		t.Errorf("list --server crash: no line saying it failed and why:\n%s", errOut)
	}
}

// lineWith reports whether one line of text contains every part.
func lineWith(text string, parts ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestServersDetail: `mcpx servers` exits 1 when a server failed, with
// the reason (a hung child's last stderr line included) in the table and
// in --json, and prints the config file in use on stderr. Asked of a
// running serve, a server still starting says what it waits for, for how
// long, and the last line it printed.
func TestServersDetail(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx":    fx("--name", "fx"),
		"hung":  map[string]any{"command": fixture, "args": []string{"--hang-init", "--stderr", "loading model weights"}, "timeout": "2s"},
		"crash": map[string]any{"command": fixture, "args": []string{"--exit-at-start", "3"}},
	}})
	out, errOut, code := runMCPX(t, "servers", "--json", "--config", cfg)
	if code != 1 {
		t.Errorf("servers with failed servers: exit %d, want 1\n%s", code, errOut)
	}
	by := serversByName(t, out)
	if s := by["hung"]; s.State != "failed" || !strings.Contains(s.Error, "no answer within 2s") || !strings.Contains(s.Error, "loading model weights") {
		t.Errorf("hung = %+v, want failed with the timeout and its last stderr line", s)
	}
	if s := by["crash"]; s.State != "failed" || !strings.Contains(s.Error, "exit status 3") {
		t.Errorf("crash = %+v", s)
	}
	abs, _ := filepath.Abs(cfg)
	if !lineWith(errOut, "config: "+abs) {
		t.Errorf("servers does not name the config file on stderr:\n%s", errOut)
	}

	// Only ready servers: exit status 0.
	ok := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx()}})
	if _, errOut, code := runMCPX(t, "servers", "--config", ok); code != 0 {
		t.Errorf("servers with every server ready: exit %d\n%s", code, errOut)
	}

	// A running serve: the hung server is still starting.
	slow := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx":   fx(),
		"hung": map[string]any{"command": fixture, "args": []string{"--hang-init", "--stderr", "loading model weights"}, "timeout": "120s"},
	}})
	srv := startHTTP(t, slow, nil)
	var hung serverJSON
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _, _ := runMCPX(t, "servers", "--json", "--server-url", srv.url)
		hung = serversByName(t, out)["hung"]
		if strings.Contains(hung.LastLine, "hang-init") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if hung.State != "starting" || hung.WaitingFor != "initialize" || hung.WaitingMillis <= 0 ||
		!strings.Contains(hung.LastLine, "hang-init") || hung.LastStream != "stderr" {
		t.Errorf("hung in a running serve = %+v, want starting, waiting for initialize, with its stderr line", hung)
	}
	out, _, _ = runMCPX(t, "servers", "--server-url", srv.url)
	if !lineWith(out, "hung\tstdio\tstarting\t", "waiting for its answer to initialize for ", "last stderr line: ", "hang-init") {
		t.Errorf("servers table lacks why hung is still starting:\n%s", out)
	}
}

// TestQuietClashes: two servers with the same names and no prefix give
// one warning per server that lost names, not one per name; each name is
// logged at debug level. The config search order reads the same in
// --help and in the no-config message.
func TestQuietClashes(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"one": map[string]any{"command": fixture, "args": []string{"--name", "one"}, "prefix": ""},
		"two": map[string]any{"command": fixture, "args": []string{"--name", "two"}, "prefix": ""},
	}})
	_, errOut, code := runMCPX(t, "list", "tools", "--config", cfg)
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, errOut)
	}
	if n := strings.Count(errOut, "names are hidden"); n != 1 || !lineWith(errOut, "server two: ", "of its names are hidden") {
		t.Errorf("want one line saying server two lost names, got %d:\n%s", n, errOut)
	}
	if strings.Contains(errOut, "is hidden:") {
		t.Errorf("each hidden name was logged at warn:\n%s", errOut)
	}
	_, errOut, _ = runMCPX(t, "list", "tools", "--log-level", "debug", "--config", cfg)
	if !lineWith(errOut, `name collision: tool "echo" of server two is hidden: server one already has that name`) {
		t.Errorf("--log-level debug does not log each clash:\n%s", errOut)
	}

	help, _, _ := runMCPX(t, "--help")
	order := strings.TrimPrefix(config.SearchOrder, "--config FILE, ")
	if !strings.Contains(strings.Join(strings.Fields(help), " "), order) {
		t.Errorf("--help does not give the search order %q:\n%s", order, help)
	}
	cmd := mcpxCommand("list", "tools")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+t.TempDir(), "MCPX_CONFIG=")
	b, _ := cmd.CombinedOutput()
	if !strings.Contains(string(b), config.SearchOrder) {
		t.Errorf("the no-config message does not give the search order:\n%s", b)
	}
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "),
		"`--config FILE`, `$MCPX_CONFIG`, `./mcpx.{json,yaml,yml,toml}`, `$XDG_CONFIG_HOME/mcpx/config.{json,yaml,yml,toml}` (`~/.config/mcpx/` without `XDG_CONFIG_HOME`)") {
		t.Errorf("docs/config.md's search order differs from config.SearchOrder")
	}
}

// TestExitLogged: when a served server exits, one log line says so with
// its exit status and when it restarts.
func TestExitLogged(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"dies": map[string]any{"command": fixture, "args": []string{"--die-after", "1s"}},
	}})
	c := startServe(t, cfg)
	c.initialize()
	c.waitStderr(30*time.Second, "dies: exited", "exit status 4", "restart=\"in ")
}

// ptyPair opens a pseudo-terminal and returns its two ends; everything
// written to the terminal end is gathered from the other into out.
func ptyPair(t *testing.T) (tty *os.File, out *testenv.Buffer) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	out = &testenv.Buffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(out, ptmx) // ends with an error once the terminal end is closed and drained
	}()
	t.Cleanup(func() {
		tty.Close()
		ptmx.Close()
		<-done
	})
	return tty, out
}

// TestSpinnerOnTerminal: on a terminal, a command that waits shows one
// line naming the servers it still waits for (the one it needs, not the
// hung one beside it) and the seconds passed, and erases it.
func TestSpinnerOnTerminal(t *testing.T) {
	cfg := hungReadyCrash(t)
	tty, screen := ptyPair(t)
	cmd := mcpxCommand("call", "everything_echo", `{"message":"hi"}`, "--config", cfg)
	cmd.Stderr = tty
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "hi") {
		t.Fatalf("call: %v %q\n%s", err, out, screen.String())
	}
	// The terminal's output is read in the background: wait for the
	// spinner's last erase to arrive.
	erased := func(s string) bool { return strings.LastIndex(s, clearLine) > strings.LastIndex(s, "to start (") }
	deadline := time.Now().Add(10 * time.Second)
	for !erased(screen.String()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := screen.String()
	if !strings.Contains(got, "waiting for everything to start (0s)") {
		t.Errorf("no spinner line naming everything:\n%q", got)
	}
	if strings.Contains(got, "hung to start") || strings.Contains(got, "hung, ") {
		t.Errorf("the spinner names hung, which call does not wait for:\n%q", got)
	}
	if !erased(got) {
		t.Errorf("the spinner line is not erased:\n%q", got)
	}
}

// TestServeOnTerminal: `mcpx serve` with a terminal for stdin says that it
// waits for an MCP client and how to list tools instead.
func TestServeOnTerminal(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx()}})
	tty, _ := ptyPair(t)
	cmd := mcpxCommand("serve", "--config", cfg)
	cmd.Stdin = tty
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if !waitExit(cmd, 10*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "mcpx list tools") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !lineWith(stderr.String(), "waiting for an MCP client", "stdin") || !strings.Contains(stderr.String(), "run `mcpx list tools`") {
		t.Errorf("serve on a terminal does not say what it waits for:\n%s", stderr.String())
	}

	// Not on a terminal (an MCP client's pipe): nothing of the kind.
	c := startServe(t, cfg)
	c.initialize()
	if strings.Contains(c.stderr.String(), "waiting for an MCP client") {
		t.Errorf("serve on a pipe says it waits for a client:\n%s", c.stderr.String())
	}
	// serve logs the config file in use at info.
	c.waitStderr(10*time.Second, "INFO", "config loaded", cfg)
}

// TestBrokenServerLoggedOnce: under serve, a server that fails the same
// way at every restart (each start writes a pid file) is logged above
// debug for its first attempt only: one error, and the stderr line it
// printed then; the later attempts and their stderr lines (each with
// another pid) are logged at debug.
func TestBrokenServerLoggedOnce(t *testing.T) {
	pids := t.TempDir()
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx":     fx(),
		"broken": map[string]any{"command": fixture, "args": []string{"--exit-at-start", "3", "--pid-dir", pids}},
	}})
	c := startServe(t, cfg, "--log-level", "debug")
	c.initialize()
	const attempts = 4
	waitPidFiles(t, pids, attempts)
	var errs, debug, lateAbove int
	for _, line := range strings.Split(c.stderr.String(), "\n") {
		// date time LEVEL prefix: message
		fields := strings.Fields(line)
		if len(fields) < 4 || fields[3] != "broken:" {
			continue
		}
		switch fields[2] {
		case "DEBU":
			debug++
		case "ERRO":
			errs++
			fallthrough
		default:
			if debug > 0 {
				lateAbove++
			}
		}
	}
	if errs != 1 || lateAbove != 0 || debug < attempts-2 {
		t.Errorf("after %d attempts: %d errors (want 1), %d lines above debug after the first retry (want 0), %d debug lines:\n%s",
			attempts, errs, lateAbove, debug, c.stderr.String())
	}
}
