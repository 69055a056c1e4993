package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// runResult is the answer of the proxy's run action: the value's JSON
// as its first text, or the failure.
type runResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// proxyRun runs code through the proxy tool of c and returns its answer.
func proxyRun(t *testing.T, c *rawClient, code string) runResult {
	t.Helper()
	res, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{"action": "run", "code": code}})
	if e != nil {
		t.Fatalf("run: %s", e.Message)
	}
	var r runResult
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("run answered %s", res)
	}
	return r
}

// keptURI matches the URI of a kept result, which names one call: two
// calls of the same tool keep two results.
var keptURI = regexp.MustCompile(`mcpx://results/[A-Za-z0-9._~-]+`)

// TestCodeModeGateParity: for a tool withheld by pinning, filtered out
// by the config, hidden by the profile, renamed by an override, capped
// by maxResultBytes, failing, or not there, a script's proxy.call gets
// exactly what the proxy's call action gets, and a hidden tool stays out
// of the script's proxy.list too.
func TestCodeModeGateParity(t *testing.T) {
	state := t.TempDir()
	env := trustEnv(state, "")
	defs := filepath.Join(t.TempDir(), "defs.json")
	writeDefs(t, defs, map[string]any{})
	entry := fx("--name", "fx", "--defs", defs)
	entry["tools"] = map[string]any{
		"deny": []string{"crash"},
		"override": map[string]any{"structured": map[string]any{"name": "shape",
			"annotations": map[string]any{"readOnlyHint": true}}},
	}
	cfg := writeConfig(t, map[string]any{"maxResultBytes": 2048, "code": map[string]any{"approve": "none", "maxOutput": "64KiB"},
		"servers":  map[string]any{"fx": entry},
		"profiles": map[string]any{"p": map[string]any{"tools": map[string]any{"deny": []string{"fx_env"}}}}})
	if _, errOut, code := runPinned(t, env, "list", "tools", "--config", cfg); code != 0 {
		t.Fatalf("first run (pins fx): exit %d\n%s", code, errOut)
	}
	writeDefs(t, defs, changedDefs) // echo changes, newtool is new: both withheld

	c := startServeEnv(t, cfg, env, "--profile", "p")
	c.initialize()
	cases := []struct {
		name, tool, args string
	}{
		{"withheld, changed", "fx_echo", `{"message":"hi"}`},
		{"withheld, new", "fx_newtool", `{}`},
		{"filtered", "fx_crash", `{}`},
		{"hidden by the profile", "fx_env", `{}`},
		{"overridden: the new name", "fx_shape", `{"a":2,"b":3}`},
		{"overridden: the old name", "fx_structured", `{}`},
		{"capped", "fx_big", `{"bytes":10000}`},
		{"capped, structured", "fx_big", `{"bytes":10000,"as":"structured"}`},
		{"failing", "fx_fail", `{}`},
		{"not there", "fx_nope", `{}`},
		{"the server's own name", "big", `{"bytes":10}`},
		{"bad arguments", "fx_sleep", `{"ms":"soon"}`},
		{"the proxy itself", "proxy", `{"action":"list"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			direct, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{
				"action": "call", "type": "tool", "path": tc.tool, "args": json.RawMessage(tc.args)}})
			if e != nil {
				t.Fatalf("direct call: %s", e.Message)
			}
			r := proxyRun(t, c, `return await proxy.call(`+quoteJS(tc.tool)+`, `+tc.args+`, {raw: true})`)
			if r.IsError {
				t.Fatalf("the run failed: %s", r.Content[0].Text)
			}
			got, want := keptURI.ReplaceAllString(r.Content[0].Text, "KEPT"), keptURI.ReplaceAllString(string(direct), "KEPT")
			if !jsonEqual(json.RawMessage(got), json.RawMessage(want)) {
				t.Errorf("script's call:\n%s\nthe proxy's call:\n%s", got, want)
			}
		})
	}
	r := proxyRun(t, c, `(await proxy.list({limit: 100})).map(t => t.name)`)
	var names []string
	if err := json.Unmarshal([]byte(r.Content[0].Text), &names); err != nil {
		t.Fatalf("list in a script: %s", r.Content[0].Text)
	}
	for _, hidden := range []string{"fx_echo", "fx_newtool", "fx_crash", "fx_env", "fx_structured"} {
		if contains(names, hidden) {
			t.Errorf("a script's proxy.list shows %s, which the client may not see: %v", hidden, names)
		}
	}
	if !contains(names, "fx_shape") || !contains(names, "fx_fail") {
		t.Errorf("a script's proxy.list lacks tools the client sees: %v", names)
	}
}

// quoteJS is s as a JavaScript string literal.
func quoteJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCodeModeRun: a script composes calls and returns one number; its
// console lines come back; a failure names what broke; a tool that may
// write is refused, naming why, to a client that cannot be asked; code:
// false takes the action away.
func TestCodeModeRun(t *testing.T) {
	entry := fx("--name", "fx")
	entry["tools"] = map[string]any{"override": map[string]any{"structured": map[string]any{
		"annotations": map[string]any{"readOnlyHint": true}}}}
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": entry}})
	c := startServe(t, cfg)
	c.initialize()
	r := proxyRun(t, c, `
		const sums = await proxy.callAll([1, 2, 3].map(i => ["fx_structured", {a: i, b: i}]));
		console.log("sums", sums.map(s => s.sum));
		const echo = await proxy.call("fx_echo", {message: "hello"});
		return sums.reduce((n, s) => n + s.sum, 0) + echo.length`)
	if r.IsError || r.Content[0].Text != "17" {
		t.Fatalf("run: %+v", r)
	}
	if len(r.Content) != 2 || !strings.Contains(r.Content[1].Text, "sums [2,4,6]") {
		t.Errorf("the log: %+v", r.Content)
	}
	r = proxyRun(t, c, `try { await proxy.call("fx_nope", {}) } catch (e) { return e.message }`)
	if r.IsError || !strings.Contains(r.Content[0].Text, `proxy.call(\"fx_nope\")`) || !strings.Contains(r.Content[0].Text, "Unknown tool") {
		t.Errorf("a call of no tool: %+v", r)
	}
	r = proxyRun(t, c, `await proxy.call("fx_fail", {})`)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "did not declare elicitation") {
		t.Errorf("a call of a tool that may write, for a client that cannot be asked: %+v", r)
	}

	off := writeConfig(t, map[string]any{"code": false, "servers": map[string]any{"fx": fx("--name", "fx")}})
	c = startServe(t, off)
	c.initialize()
	res, _ := c.request("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{"action": "run", "code": "1"}})
	if !strings.Contains(string(res), "Unknown parameter 'code'") {
		t.Errorf("run with code: false: %s", res)
	}
	list, _ := c.request("tools/list", map[string]any{})
	if strings.Contains(string(list), `"run"`) {
		t.Errorf("tools/list shows run with code: false")
	}
}

// TestCodeModeApprovalTypeScript: with the official TypeScript SDK as a
// 2025-11-25 client that declares elicitation, a script's call of a tool
// that may write waits for the user's answer to an elicitation naming
// the tool and its arguments: an approval "for the rest of the script"
// lets the second call of that tool go unasked, a decline throws in the
// script and the tool is not called, a read-only tool is never asked
// about.
func TestCodeModeApprovalTypeScript(t *testing.T) {
	testenv.NeedNodePeers(t)
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})
	exe, _ := os.Executable()
	cmd := exec.Command("node", "../../testdata/node/e2e-codemode.mjs", exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, err := runWithin(cmd, time.Minute)
	var r struct {
		Error        string
		ProxyActions []string
		IsError      bool
		Value        struct {
			A, B     int
			Declined string
			Echo     string
		}
		Asked []struct {
			Message         string
			RequestedSchema map[string]any
		}
	}
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil || r.Error != "" {
		t.Fatalf("client: %v %v %s\nstdout: %s\nstderr: %s", err, jerr, r.Error, out, stderr.String())
	}
	if !contains(r.ProxyActions, "run") {
		t.Errorf("the proxy's actions %v lack run", r.ProxyActions)
	}
	if r.IsError || r.Value.A != 2 || r.Value.B != 4 || r.Value.Echo != "read only" {
		t.Fatalf("the run's value: %+v", r)
	}
	if !strings.Contains(r.Value.Declined, "declined") {
		t.Errorf("the declined call threw %q", r.Value.Declined)
	}
	if len(r.Asked) != 2 {
		t.Fatalf("asked %d times, want 2 (fx_structured once for the run, fx_fail): %+v", len(r.Asked), r.Asked)
	}
	if m := r.Asked[0].Message; !strings.Contains(m, "fx_structured") || !strings.Contains(m, `{"a":1,"b":1}`) {
		t.Errorf("the approval does not name the call and its arguments: %q", m)
	}
	if !strings.Contains(r.Asked[1].Message, "fx_fail") {
		t.Errorf("the second approval: %q", r.Asked[1].Message)
	}
}

// runWithin runs cmd for its stdout, killing it past d.
func runWithin(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
		return out, err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return out, fmt.Errorf("%s did not finish within %s", cmd.Path, d)
	}
}

// TestCodeModeTrail: a run is on the audit trail as one line of its own
// (server mcpx, tool proxy) and one line per inner call, all with the
// same run id; its inner calls' spans are children of the run's request
// span, in the trace the client gave.
func TestCodeModeTrail(t *testing.T) {
	state := t.TempDir()
	rcv := newOTLPReceiver(t)
	cfg := writeConfig(t, map[string]any{"audit": map[string]any{"arguments": "keys"},
		"servers": map[string]any{"fx": fx("--name", "fx")}})
	c := startServeEnv(t, cfg, append(rcv.env(), "XDG_STATE_HOME="+state))
	c.initialize()
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	res, e := c.request("tools/call", map[string]any{"name": "proxy",
		"arguments": map[string]any{"action": "run", "code": `(await proxy.callAll([["fx_echo", {message: "a"}], ["fx_echo", {message: "b"}]])).join("")`},
		"_meta":     map[string]any{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}})
	if e != nil || !strings.Contains(string(res), `"\"ab\""`) {
		t.Fatalf("run: %s %v", res, e)
	}
	c.stdin.Close()
	if !waitExit(c.cmd, 10*time.Second) {
		t.Fatal("serve did not exit after stdin closed")
	}

	lines := auditLines(t, trailOf(state))
	var run string
	var inner int
	for _, l := range lines {
		switch {
		case l.Server == "mcpx" && l.Tool == "proxy":
			run = l.Run
		case l.Server == "fx" && l.Tool == "echo":
			inner++
			if l.Run == "" {
				t.Errorf("an inner call's line has no run: %+v", l)
			}
		}
	}
	if run == "" || inner != 2 {
		t.Fatalf("the trail: run %q, %d inner calls, want a run and 2: %+v", run, inner, lines)
	}
	for _, l := range lines {
		if l.Server == "fx" && l.Run != run {
			t.Errorf("an inner call names run %q, the run is %q", l.Run, run)
		}
	}

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var server []byte
	var calls [][]byte
	for _, sp := range rcv.spans {
		if hex.EncodeToString(sp.TraceId) != trace {
			continue
		}
		switch sp.Kind {
		case tracepb.Span_SPAN_KIND_SERVER:
			server = sp.SpanId
		case tracepb.Span_SPAN_KIND_CLIENT:
			calls = append(calls, sp.ParentSpanId)
		}
	}
	if server == nil || len(calls) != 2 {
		t.Fatalf("in the client's trace: server span %x, %d upstream call spans, want one and 2", server, len(calls))
	}
	for _, parent := range calls {
		if !bytes.Equal(parent, server) {
			t.Errorf("an inner call's span has parent %x, not the run's request span %x", parent, server)
		}
	}
}

// TestRunCommand: mcpx run runs a script from a file or stdin against
// the catalog and prints its value; a tool that may write is refused
// without --approve (exit 1, naming the flag's reason) and called with
// it; a script that is not there is a usage error.
func TestRunCommand(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})
	script := filepath.Join(t.TempDir(), "sum.js")
	if err := os.WriteFile(script, []byte(`const r = await proxy.call("fx_echo", {message: "from a file"}); return r.length`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := auditRun(t, t.TempDir(), "run", script, "--config", cfg)
	if code != 0 || strings.TrimSpace(out) != "11" {
		t.Errorf("run a file: exit %d, %q\n%s", code, out, errOut)
	}

	write := `return (await proxy.call("fx_structured", {a: 4, b: 5})).sum`
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-", "--config", cfg}, 1, "no one can be asked"},
		{[]string{"run", "-", "--approve", "--config", cfg}, 0, "9"},
	} {
		cmd := mcpxCommand(tc.args...)
		cmd.Stdin = strings.NewReader(write)
		var stderr testenv.Buffer
		cmd.Stderr = &stderr
		b, _ := cmd.Output()
		if got := cmd.ProcessState.ExitCode(); got != tc.code || !strings.Contains(string(b)+stderr.String(), tc.want) {
			t.Errorf("mcpx %v: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tc.args, got, tc.code, tc.want, b, stderr.String())
		}
	}
	if _, errOut, code := auditRun(t, t.TempDir(), "run", "/no/such/script.js", "--config", cfg); code != 2 || !strings.Contains(errOut, "no such file") {
		t.Errorf("a missing script: exit %d\n%s", code, errOut)
	}
}
