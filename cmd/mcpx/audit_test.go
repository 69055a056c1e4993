package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/internal/testenv"
)

// auditRun runs mcpx as a process with its state in stateDir and returns
// stdout, stderr and the exit code.
func auditRun(t testing.TB, stateDir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := mcpxCommand(args...)
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+stateDir)
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	return string(out), stderr.String(), cmd.ProcessState.ExitCode()
}

// auditLines reads the trail under stateDir; none when there is no file.
func auditLines(t testing.TB, path string) []audit.Line {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []audit.Line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l audit.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

func trailOf(state string) string { return filepath.Join(state, "mcpx", "audit.jsonl") }

// TestAuditServe: the calls a client makes through serve (directly and
// through the proxy tool) each append a line naming the client, the
// server, what was called and how it went.
func TestAuditServe(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, map[string]any{"expose": "both", "audit": map[string]any{"arguments": "keys"},
		"servers": map[string]any{"fx": fx()}})
	c := startServeEnv(t, cfg, []string{"XDG_STATE_HOME=" + state})
	c.initialize()
	steps := []struct{ method, params string }{
		{"tools/call", `{"name":"fx_echo","arguments":{"message":"secret-value"}}`},
		{"tools/call", `{"name":"fx_fail","arguments":{}}`},
		{"resources/read", `{"uri":"fixture://json"}`},
		{"prompts/get", `{"name":"fx_greet","arguments":{"name":"Ada"}}`},
		{"tools/call", `{"name":"proxy","arguments":{"action":"call","type":"tool","path":"fx_echo","args":{"message":"via proxy"}}}`},
	}
	for _, s := range steps {
		if _, e := c.request(s.method, json.RawMessage(s.params)); e != nil {
			t.Fatalf("%s: %s", s.method, e.Message)
		}
	}
	c.stdin.Close()
	if !waitExit(c.cmd, 10*time.Second) {
		t.Fatal("serve did not exit after stdin closed")
	}
	lines := auditLines(t, trailOf(state))
	if len(lines) != len(steps) {
		t.Fatalf("%d audit lines, want %d: %+v", len(lines), len(steps), lines)
	}
	want := []struct{ tool, uri, prompt, outcome, keys string }{
		{tool: "echo", outcome: "ok", keys: "message"},
		{tool: "fail", outcome: "isError"},
		{uri: "fixture://json", outcome: "ok"},
		{prompt: "greet", outcome: "ok", keys: "name"},
		{tool: "echo", outcome: "ok", keys: "message"},
	}
	for i, l := range lines {
		w := want[i]
		if l.Client != "raw-test" || l.Session == "" || l.Server != "fx" || l.Method != steps[i].method || l.Tool != w.tool ||
			l.URI != w.uri || l.Prompt != w.prompt || l.Outcome != w.outcome || strings.Join(l.ArgKeys, ",") != w.keys ||
			l.ResultBytes == 0 || l.Time.IsZero() || l.Arguments != nil {
			t.Errorf("line %d: %+v, want %+v", i, l, w)
		}
		if w.keys != "" && (l.ArgsBytes == 0 || len(l.ArgsSHA256) != 64) {
			t.Errorf("line %d: arguments' size %d and hash %q", i, l.ArgsBytes, l.ArgsSHA256)
		}
	}
	raw, _ := os.ReadFile(trailOf(state))
	if strings.Contains(string(raw), "secret-value") {
		t.Errorf("an argument value is in the trail with arguments \"keys\":\n%s", raw)
	}
}

// TestAuditTerminal: `mcpx call`, `read` and `get` append their lines
// too; what a line keeps of the arguments follows audit.arguments, and
// `audit: false` writes nothing.
func TestAuditTerminal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		audit any
		keys  string
		value bool
	}{
		{"default", nil, "", false},
		{"keys", map[string]any{"arguments": "keys"}, "message", false},
		{"full", map[string]any{"arguments": "full"}, "", true},
		{"off", false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			c := map[string]any{"servers": map[string]any{"fx": fx()}}
			if tc.audit != nil {
				c["audit"] = tc.audit
			}
			cfg := writeConfig(t, c)
			for _, args := range [][]string{
				{"call", "fx_echo", `{"message":"secret-value"}`},
				{"read", "fixture://json"},
				{"get", "fx_greet", "--arg", "name=Ada"},
			} {
				if out, stderr, code := auditRun(t, state, append(args, "--config", cfg)...); code != 0 || out == "" {
					t.Fatalf("%s: exit %d, stdout %q, stderr:\n%s", args[0], code, out, stderr)
				}
			}
			lines := auditLines(t, trailOf(state))
			if tc.audit == false {
				if lines != nil {
					t.Fatalf("audit: false wrote %+v", lines)
				}
				return
			}
			if len(lines) != 3 || lines[0].Tool != "echo" || lines[1].URI != "fixture://json" || lines[2].Prompt != "greet" {
				t.Fatalf("lines %+v", lines)
			}
			l := lines[0]
			if l.Server != "fx" || l.Outcome != "ok" || l.ArgsBytes != len(`{"message":"secret-value"}`) || len(l.ArgsSHA256) != 64 ||
				strings.Join(l.ArgKeys, ",") != tc.keys {
				t.Errorf("call line %+v", l)
			}
			raw, _ := os.ReadFile(trailOf(state))
			if got := strings.Contains(string(raw), "secret-value"); got != tc.value {
				t.Errorf("argument value in the trail: %v, want %v:\n%s", got, tc.value, raw)
			}
		})
	}
}

// TestAuditUnwritable: a state directory mcpx cannot write to costs a
// warning, never the call.
func TestAuditUnwritable(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx()}})
	out, stderr, code := auditRun(t, notDir, "call", "fx_echo", `{"message":"still answered"}`, "--config", cfg)
	if code != 0 || !strings.Contains(out, "still answered") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	if n := strings.Count(stderr, "audit trail not written"); n != 1 {
		t.Errorf("%d warnings about the trail, want 1:\n%s", n, stderr)
	}
}

// TestAuditRotation: past audit.maxBytes the trail moves to audit.jsonl.1
// and so on, three files at most, none past the limit.
func TestAuditRotation(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, map[string]any{"expose": "both", "audit": map[string]any{"maxBytes": 4096}, "servers": map[string]any{"fx": fx()}})
	c := startServeEnv(t, cfg, []string{"XDG_STATE_HOME=" + state})
	c.initialize()
	const calls = 80 // each line is about 200 bytes: 16 KB in all
	for range calls {
		if _, e := c.request("tools/call", json.RawMessage(`{"name":"fx_echo","arguments":{"message":"m"}}`)); e != nil {
			t.Fatal(e.Message)
		}
	}
	c.stdin.Close()
	if !waitExit(c.cmd, 10*time.Second) {
		t.Fatal("serve did not exit after stdin closed")
	}
	trail := trailOf(state)
	kept := 0
	for _, p := range []string{trail, trail + ".1", trail + ".2"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 4096 {
			t.Errorf("%s: %d bytes, past maxBytes", p, st.Size())
		}
		kept += len(auditLines(t, p))
	}
	if _, err := os.Stat(trail + ".3"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fourth file: %v", err)
	}
	if kept == 0 || kept >= calls {
		t.Errorf("%d lines kept of %d, want the newest only", kept, calls)
	}
}

// writeTrail writes lines as the trail under state.
func writeTrail(t testing.TB, state string, lines ...audit.Line) {
	t.Helper()
	var b []byte
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, j...), '\n')
	}
	if err := os.MkdirAll(filepath.Dir(trailOf(state)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trailOf(state), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLogFilters: `mcpx log` keeps the lines of --server within --since,
// as JSON or as rows whose control characters are made visible.
func TestLogFilters(t *testing.T) {
	state := t.TempDir()
	now := time.Now().UTC()
	writeTrail(t, state,
		audit.Line{Time: now.Add(-3 * time.Hour), Server: "a", Method: "tools/call", Tool: "old", Outcome: "ok"},
		audit.Line{Time: now.Add(-time.Minute), Server: "b", Method: "tools/call", Tool: "other", Outcome: "ok"},
		audit.Line{Time: now.Add(-time.Minute), Server: "a", Method: "tools/call", Tool: "new\x1b[2J", Outcome: "isError"},
	)
	out, stderr, code := auditRun(t, state, "log", "--json", "--server", "a", "--since", "1h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []audit.Line
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		var l audit.Line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("line %q: %v", s, err)
		}
		got = append(got, l)
	}
	if len(got) != 1 || got[0].Tool != "new\x1b[2J" || got[0].Outcome != "isError" {
		t.Fatalf("--json --server a --since 1h: %+v", got)
	}
	out, _, code = auditRun(t, state, "log", "--server", "a")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(rows) != 2 || !strings.Contains(rows[1], `new\x1b[2J`) || strings.Contains(out, "\x1b") {
		t.Fatalf("rows (exit %d):\n%q", code, out)
	}
	if _, stderr, code := auditRun(t, state, "log", "--since", "soon"); code == 0 || !strings.Contains(stderr, "--since") {
		t.Errorf("--since soon: exit %d, stderr %q", code, stderr)
	}
}

// TestLogFollow: `mcpx log --follow` prints the calls made after it
// started.
func TestLogFollow(t *testing.T) {
	state := t.TempDir()
	writeTrail(t, state, audit.Line{Time: time.Now().UTC(), Server: "fx", Method: "tools/call", Tool: "before", Outcome: "ok"})
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx()}})
	cmd := mcpxCommand("log", "--follow", "--json", "--server", "fx")
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+state)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
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
	tools := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l audit.Line
			json.Unmarshal(sc.Bytes(), &l)
			tools <- l.Tool
		}
		close(tools)
	}()
	deadline := time.After(30 * time.Second)
	next := func() string {
		t.Helper()
		select {
		case tool := <-tools:
			return tool
		case <-deadline:
			t.Fatal("no line from mcpx log --follow within 30s")
			return ""
		}
	}
	if tool := next(); tool != "before" {
		t.Fatalf("first line: tool %q, want before", tool)
	}
	// Printed the trail so far: a call now is one it must follow.
	if _, stderr, code := auditRun(t, state, "call", "fx_echo", `{"message":"later"}`, "--config", cfg); code != 0 {
		t.Fatalf("call: exit %d: %s", code, stderr)
	}
	if tool := next(); tool != "echo" {
		t.Fatalf("followed line: tool %q, want echo", tool)
	}
}

// TestAuditHTTPSession: a call made in an HTTP session is audited under
// that session's id, not "stdio".
func TestAuditHTTPSession(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx()}})
	srv := startHTTP(t, cfg, []string{"XDG_STATE_HOME=" + state})
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	code, h, body := do(t, "POST", srv.url+"/mcp", hdr, initBody)
	sid := h.Get("Mcp-Session-Id")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	hdr["Mcp-Session-Id"], hdr["MCP-Protocol-Version"] = sid, "2025-11-25"
	do(t, "POST", srv.url+"/mcp", hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, _, body := do(t, "POST", srv.url+"/mcp", hdr,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"m"}}}`); code != 200 || !strings.Contains(body, `"m"`) {
		t.Fatalf("tools/call: %d %s", code, body)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if !waitExit(srv.cmd, 15*time.Second) {
		t.Fatal("serve --http did not exit on SIGTERM")
	}
	lines := auditLines(t, trailOf(state))
	if len(lines) != 1 || lines[0].Session != sid || lines[0].Client != "raw" {
		t.Errorf("audit lines %+v, want one in session %s of client raw", lines, sid)
	}
}

// TestAuditModernClient: a 2026-07-28 request has no session, but its
// _meta names the client: its audit lines carry that name, for a call
// sent straight to the upstream and for one made through the proxy tool.
func TestAuditModernClient(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, map[string]any{"expose": "both", "servers": map[string]any{"fx": fx()}})
	srv := startHTTP(t, cfg, []string{"XDG_STATE_HOME=" + state})
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"modern-auditee","version":"1.0"}}`
	if r := post(t, srv.url+"/mcp", "tools/call", "fx_echo", `{"name":"fx_echo","arguments":{"message":"direct"},"_meta":`+meta+`}`, nil); r.Error != nil {
		t.Fatalf("direct call: %+v", r.Error)
	}
	if r := post(t, srv.url+"/mcp", "tools/call", "proxy", `{"name":"proxy","arguments":{"action":"call","type":"tool","path":"fx_echo","args":{"message":"proxied"}},"_meta":`+meta+`}`, nil); r.Error != nil {
		t.Fatalf("proxy call: %+v", r.Error)
	}
	stopServe(t, srv)
	lines := auditLines(t, trailOf(state))
	if len(lines) != 2 {
		t.Fatalf("audit lines %+v, want 2", lines)
	}
	for _, l := range lines {
		if l.Client != "modern-auditee" || l.Session != "" {
			t.Errorf("audit line %+v: want client modern-auditee and no session", l)
		}
	}
}
