package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestServeTypeScriptClient drives `mcpx serve --stdio` with the official
// TypeScript SDK client against server-everything and the Go fixture.
func TestServeTypeScriptClient(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{
		"expose": "direct",
		"servers": map[string]any{
			"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
			"fx":         fx("--name", "fx"),
		},
	})
	exe, _ := os.Executable()
	cmd := exec.Command("node", "../../testdata/node/e2e-client.mjs", exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), runMainEnv+"=1",
		`E2E_CALL={"name":"everything_echo","arguments":{"message":"hello from ts"}}`,
		"E2E_READ=demo://resource/static/document/architecture.md",
		`E2E_PROMPT={"name":"everything_args-prompt","arguments":{"city":"Paris"}}`,
		`E2E_CHANGE={"name":"fx_add-tool","arguments":{"name":"fresh"}}`,
	)
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var got struct {
		ServerInfo struct{ Name string }
		Tools      []struct {
			Name        string
			InputSchema map[string]any
		}
		Prompts           []struct{ Name string }
		Resources         []struct{ URI string }
		ResourceTemplates []struct{ URITemplate string }
		Call              struct {
			Content []struct{ Type, Text string }
		}
		Read struct {
			Contents []struct{ URI, Text string }
		}
		Prompt struct {
			Messages []struct {
				Content struct{ Text string }
			}
		}
		ListChangedCount int
		ToolsAfterChange []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ts client output: %v\n%s", err, out)
	}
	if got.ServerInfo.Name != "mcpx" {
		t.Errorf("serverInfo.name = %q, want mcpx", got.ServerInfo.Name)
	}
	names := map[string]bool{}
	for _, tl := range got.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"everything_echo", "everything_get-sum", "fx_echo", "fx_big"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s (got %d tools)", want, len(got.Tools))
		}
	}
	if !hasPrompt(got.Prompts, "everything_args-prompt") || !hasPrompt(got.Prompts, "fx_greet") {
		t.Errorf("prompts = %v, want everything_args-prompt and fx_greet", got.Prompts)
	}
	if len(got.Resources) < 7 || len(got.ResourceTemplates) < 3 {
		t.Errorf("got %d resources and %d templates, want >= 7 and >= 3", len(got.Resources), len(got.ResourceTemplates))
	}
	if len(got.Call.Content) == 0 || !strings.Contains(got.Call.Content[0].Text, "hello from ts") {
		t.Errorf("echo call = %+v, want the message back", got.Call)
	}
	if len(got.Read.Contents) != 1 || got.Read.Contents[0].URI != "demo://resource/static/document/architecture.md" || got.Read.Contents[0].Text == "" {
		t.Errorf("resource read = %+v", got.Read)
	}
	if len(got.Prompt.Messages) == 0 || !strings.Contains(got.Prompt.Messages[0].Content.Text, "Paris") {
		t.Errorf("prompt get = %+v, want a message about Paris", got.Prompt)
	}
	if got.ListChangedCount != 1 {
		t.Errorf("client got %d tools/list_changed for one upstream change, want exactly 1", got.ListChangedCount)
	}
	if !contains(got.ToolsAfterChange, "fx_fresh") {
		t.Errorf("after the change, tools = %v, want fx_fresh among them", got.ToolsAfterChange)
	}
}

func hasPrompt(ps []struct{ Name string }, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestServeRawPassThrough reads mcpx's stdout as raw JSON-RPC: every line
// is a JSON-RPC message, and what the fixture sent (schemas, annotations,
// _meta, content annotations, structuredContent, isError, 5 MB payloads)
// reaches the client unchanged.
func TestServeRawPassThrough(t *testing.T) {
	cfg := writeConfig(t, map[string]any{
		"expose":         "direct",
		"maxResultBytes": "off", // the 5 MiB result whole (results_test.go cuts)
		"servers": map[string]any{
			"fx":    fx("--name", "fx", "--stderr", "hello on stderr"),
			"noisy": fx("--noise"),
		},
	})
	c := startServe(t, cfg)
	c.initialize()
	direct := directFixture(t)

	toolsRes, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatalf("tools/list: %s", e.Message)
	}
	gotEcho := findItem(t, toolsRes, "tools", "name", "fx_echo")
	wantEcho := findItem(t, direct.request(t, "tools/list", `{}`), "tools", "name", "echo")
	wantEcho["name"] = "fx_echo"
	if !reflect.DeepEqual(gotEcho, wantEcho) {
		t.Errorf("fx_echo through mcpx differs from what the fixture sent:\n got %v\nwant %v", gotEcho, wantEcho)
	}
	gotRes, _ := c.request("resources/list", map[string]any{})
	if g, w := findItem(t, gotRes, "resources", "uri", "fixture://readme"), findItem(t, direct.request(t, "resources/list", `{}`), "resources", "uri", "fixture://readme"); !reflect.DeepEqual(g, w) {
		t.Errorf("resource differs:\n got %v\nwant %v", g, w)
	}

	for _, call := range []struct {
		exposed, original, args string
	}{
		{"fx_echo", "echo", `{"message":"hi"}`},
		{"fx_structured", "structured", `{}`},
		{"fx_fail", "fail", `{}`},
		{"fx_image", "image", `{}`},
		{"noisy_echo", "echo", `{"message":"through noise"}`},
	} {
		got, e := c.request("tools/call", map[string]any{"name": call.exposed, "arguments": json.RawMessage(call.args)})
		if e != nil {
			t.Fatalf("%s: %s", call.exposed, e.Message)
		}
		want := direct.request(t, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, call.original, call.args))
		if !jsonEqual(got, want) {
			t.Errorf("%s result differs:\n got %s\nwant %s", call.exposed, got, want)
		}
	}

	big, e := c.request("tools/call", map[string]any{"name": "fx_big", "arguments": map[string]any{}})
	if e != nil {
		t.Fatalf("big: %s", e.Message)
	}
	var bigRes struct{ Content []struct{ Text string } }
	json.Unmarshal(big, &bigRes)
	if len(bigRes.Content) != 1 || len(bigRes.Content[0].Text) != 5<<20 {
		t.Fatalf("big result: want one 5 MiB text item")
	}
	for i := 0; i < len(bigRes.Content[0].Text); i++ {
		if bigRes.Content[0].Text[i] != "0123456789abcdef"[i%16] {
			t.Fatalf("big result corrupted at byte %d", i)
		}
	}

	read, e := c.request("resources/read", map[string]any{"uri": "fixture://items/42"})
	if e != nil || !strings.Contains(string(read), `\"42\"`) {
		t.Errorf("template read = %s %v", read, e)
	}
	if _, e := c.request("resources/read", map[string]any{"uri": "nope://x"}); e == nil || e.Code != -32002 {
		t.Errorf("unknown resource: got %+v, want -32002", e)
	}
	prompt, e := c.request("prompts/get", map[string]any{"name": "fx_greet", "arguments": map[string]string{"name": "Ada"}})
	if e != nil || !strings.Contains(string(prompt), "Ada") {
		t.Errorf("prompt get = %s %v", prompt, e)
	}
	if res, e := c.request("tools/call", map[string]any{"name": "fx_nope"}); e != nil || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), `unknown tool \"fx_nope\"`) {
		t.Errorf("unknown tool: got %s %+v, want an isError result naming it", res, e)
	}
	c.send("this is not json")
	if _, e := c.request("ping", map[string]any{}); e != nil {
		t.Errorf("ping after garbage: %s", e.Message)
	}

	for i, line := range c.stdoutLines() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			t.Fatalf("stdout line %d is not a JSON-RPC 2.0 message: %q", i, truncateForLog(line))
		}
		_, hasID := m["id"]
		_, hasMethod := m["method"]
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if !hasMethod && !(hasID && (hasResult || hasError)) {
			t.Fatalf("stdout line %d is neither a request, a notification nor a response: %q", i, truncateForLog(line))
		}
	}
	if !strings.Contains(c.stderr.String(), "hello on stderr") {
		t.Errorf("the upstream's stderr line was not logged on stderr:\n%s", c.stderr.String())
	}
}

// fixtureConn is a direct connection to a fixture, to learn what it sends.
type fixtureConn struct {
	in  io.Writer
	out *bufio.Reader
	id  int
}

func directFixture(t testing.TB) *fixtureConn {
	t.Helper()
	cmd := exec.Command(fixture, "--name", "direct")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	f := &fixtureConn{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	f.request(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"direct","version":"1"}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return f
}

func (f *fixtureConn) request(t testing.TB, method, params string) json.RawMessage {
	t.Helper()
	f.id++
	fmt.Fprintf(f.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", f.id, method, params)
	for {
		line, err := f.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("fixture: %v", err)
		}
		var m struct {
			ID     int
			Result json.RawMessage
		}
		if json.Unmarshal(line, &m) == nil && m.ID == f.id {
			return m.Result
		}
	}
}

func findItem(t *testing.T, result json.RawMessage, field, key, value string) map[string]any {
	t.Helper()
	var m map[string][]map[string]any
	if err := json.Unmarshal(result, &m); err != nil {
		t.Fatalf("list result: %v", err)
	}
	for _, it := range m[field] {
		if it[key] == value {
			return it
		}
	}
	t.Fatalf("%s has no %s %q", field, key, value)
	return nil
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestServeSurvivesBadUpstreams: servers that fail in every way at start
// leave the rest working; on exit nothing mcpx started is left running.
func TestServeSurvivesBadUpstreams(t *testing.T) {
	pids := t.TempDir()
	cfg := writeConfig(t, map[string]any{"readyTimeout": "60s",
		"expose": "direct",
		"servers": map[string]any{
			"good":     fx("--name", "good"),
			"missing":  map[string]any{"command": "/no/such/command"},
			"exits":    fx("--exit-at-start", "3"),
			"hangs":    map[string]any{"command": fixture, "args": []string{"--hang-init", "--pid-dir", pids}, "timeout": "1s"},
			"garbage":  map[string]any{"command": fixture, "args": []string{"--garbage"}, "timeout": "1s"},
			"stubborn": fx("--ignore-sigterm", "--grandchild", "--pid-dir", pids),
		},
	})
	c := startServe(t, cfg)
	c.initialize()
	start := time.Now()
	res, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatal(e.Message)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("tools/list took %s with failing upstreams", took)
	}
	findItem(t, res, "tools", "name", "good_echo")
	findItem(t, res, "tools", "name", "stubborn_echo")
	if out, e := c.request("tools/call", map[string]any{"name": "good_echo", "arguments": map[string]string{"message": "still here"}}); e != nil || !strings.Contains(string(out), "still here") {
		t.Fatalf("good server after failures: %s %v", out, e)
	}
	waitPidFiles(t, pids, 3) // hangs, stubborn and its sleeper
	// The first list no longer waits for the failing servers: wait for
	// each failure to be logged (the event), then end mcpx.
	wants := []string{"missing", "exit status 3", "no answer within 1s", "non-JSON-RPC"}
	for _, want := range wants {
		testenv.Eventually(t, 15*time.Second, func() bool { return strings.Contains(c.stderr.String(), want) },
			"the failure %q was never logged", want)
	}

	c.stdin.Close()
	start = time.Now()
	if !waitExit(c.cmd, 8*time.Second) {
		t.Fatalf("mcpx still running 8s after stdin closed")
	}
	t.Logf("mcpx exited %s after stdin EOF", time.Since(start).Round(time.Millisecond))
	assertAllGone(t, pids, 3*time.Second)
	log := c.stderr.String()
	for _, want := range wants {
		if !strings.Contains(log, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, log)
		}
	}
}

func assertAllGone(t *testing.T, pids string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		alive := pidsAlive(t, pids)
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range alive {
				killPid(p)
			}
			t.Fatalf("processes still running after mcpx exited: %v", alive)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeExitLeavesNoProcess ends mcpx every way it can end and checks
// the process table each time.
func TestServeExitLeavesNoProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(c *rawClient)
	}{
		{"stdin EOF", func(c *rawClient) { c.stdin.Close() }},
		{"SIGTERM", func(c *rawClient) { c.cmd.Process.Signal(syscall.SIGTERM) }},
		{"SIGINT", func(c *rawClient) { c.cmd.Process.Signal(syscall.SIGINT) }},
		{"SIGKILL", func(c *rawClient) { c.cmd.Process.Kill() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pids := t.TempDir()
			cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
				"polite":   fx("--grandchild", "--pid-dir", pids),
				"stubborn": fx("--ignore-sigterm", "--grandchild", "--pid-dir", pids),
				// Its sleeper calls setsid, leaving the process group.
				"daemon": fx("--ignore-sigterm", "--grandchild", "--setsid", "--pid-dir", pids),
			}})
			c := startServe(t, cfg)
			c.initialize()
			c.request("tools/list", map[string]any{})
			waitPidFiles(t, pids, 6)
			tc.end(c)
			if !waitExit(c.cmd, 8*time.Second) {
				t.Fatal("mcpx did not exit within 8s")
			}
			assertAllGone(t, pids, 5*time.Second)
		})
	}
}

// TestServeRemoteTransports connects to server-everything over streamable
// HTTP and SSE through the terminal commands.
func TestServeRemoteTransports(t *testing.T) {
	everything := requireEverything(t)
	httpURL := startEverything(t, everything, "streamableHttp") + "/mcp"
	sseURL := startEverything(t, everything, "sse") + "/sse"
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"web": map[string]any{"url": httpURL},
		"old": map[string]any{"url": sseURL},
	}})
	out, errOut, code := runCLI(t, "", "list", "tools", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("list tools: exit %d\n%s", code, errOut)
	}
	var tools []struct {
		Name, Server string
		InputSchema  map[string]any
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("list tools --json: %v\n%s", err, out)
	}
	seen := map[string]string{}
	for _, tl := range tools {
		seen[tl.Name] = tl.Server
		if tl.InputSchema == nil {
			t.Errorf("%s has no inputSchema", tl.Name)
		}
	}
	if seen["web_echo"] != "web" || seen["old_echo"] != "old" {
		t.Fatalf("want web_echo from web and old_echo from old, got %v", seen)
	}
	for _, name := range []string{"web_echo", "old_echo"} {
		out, errOut, code := runCLI(t, "", "call", name, `{"message":"over the wire"}`, "--config", cfg)
		if code != 0 || !strings.Contains(out, "over the wire") {
			t.Errorf("call %s: exit %d, out %q, err %q", name, code, out, errOut)
		}
	}
	out, _, _ = runCLI(t, "", "servers", "--json", "--config", cfg)
	var servers []serverJSON
	json.Unmarshal([]byte(out), &servers)
	for _, s := range servers {
		if s.State != "ready" || s.Tools < 13 {
			t.Errorf("server %s: state %s with %d tools", s.Name, s.State, s.Tools)
		}
	}
}

// startEverything runs server-everything in an HTTP mode on a free port
// and returns its base URL once it accepts connections.
func startEverything(t *testing.T, entry, mode string) string {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command("node", entry, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	ownGroup(cmd)
	logs := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killGroup(cmd.Process)
		cmd.Wait()
	})
	waitPort(t, port, 20*time.Second, logs)
	return fmt.Sprintf("http://localhost:%d", port)
}

// gcPercent reads the collector's GOGC as the runtime reports it.
func gcPercent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestServeGCPercent: serve collects garbage at serveGCPercent while it
// runs, and puts back what it found; a GOGC in the environment wins. Not
// parallel: the setting is the whole process's.
func TestServeGCPercent(t *testing.T) {
	before := gcPercent()
	if before == serveGCPercent {
		t.Fatalf("GOGC is already %d: the test could not tell serve's setting", before)
	}
	c := mcpxConn(t)
	if got := gcPercent(); got != serveGCPercent {
		t.Errorf("GOGC while serving = %d, want %d", got, serveGCPercent)
	}
	c.close()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after serve = %d, want %d back", got, before)
	}

	t.Setenv("GOGC", strconv.FormatUint(before, 10))
	c = mcpxConn(t)
	if got := gcPercent(); got != before {
		t.Errorf("GOGC while serving with GOGC=%d in the environment = %d", before, got)
	}
	c.close()
}
