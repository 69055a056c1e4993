package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// rssPeak is the peak resident set size of a process (VmHWM), in bytes.
func rssPeak(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read /proc/%d/status: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// awaitID reads c's output until the response with that raw id.
func (c *rawClient) awaitID(id string, d time.Duration) (line []byte) {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case line := <-c.lines:
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && string(m.ID) == id {
				return line
			}
		case <-c.done:
			c.t.Fatalf("mcpx closed stdout waiting for id %s", id)
		case <-deadline:
			c.t.Fatalf("no answer for id %s within %s", id, d)
		}
	}
}

// TestCallTimeoutEndToEnd: a hung tool ends with an error naming the
// server, the tool and the limit: a JSON-RPC error for a direct call, an
// isError result through the proxy, exit status 1 from mcpx call; and the
// server is told to cancel.
func TestCallTimeoutEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"callTimeout": "500ms", "expose": "both",
		"servers": map[string]any{"slow": fx()}})
	c := startServe(t, cfg, "--log-level", "debug")
	c.initialize()
	want := []string{`server "slow"`, `tools/call "sleep"`, "callTimeout 500ms"}

	_, e := c.request("tools/call", map[string]any{"name": "slow_sleep", "arguments": map[string]any{"ms": 600000}})
	if e == nil || e.Code != -32001 {
		t.Fatalf("direct call: error %+v, want code -32001", e)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Errorf("direct call: %q does not say %q", e.Message, w)
		}
	}

	res, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{
		"action": "call", "type": "tool", "path": "slow_sleep", "args": map[string]any{"ms": 600000}}})
	var r struct {
		IsError bool
		Content []struct{ Text string }
	}
	if e != nil || json.Unmarshal(res, &r) != nil || !r.IsError || len(r.Content) == 0 {
		t.Fatalf("proxy call: %s %+v, want an isError result", res, e)
	}
	for _, w := range want {
		if !strings.Contains(r.Content[0].Text, w) {
			t.Errorf("proxy call: %q does not say %q", r.Content[0].Text, w)
		}
	}
	// The fixture logs each cancellation on its stderr, which mcpx logs.
	testenv.Eventually(t, 10*time.Second, func() bool { return strings.Count(c.stderr.String(), "timed out (callTimeout 500ms)") >= 2 },
		"the server did not hear of both cancellations:\n%s", c.stderr)

	_, stderr, code := runCLI(t, "", "call", "--config", cfg, "slow_sleep", `{"ms":600000}`)
	if code != 1 {
		t.Errorf("mcpx call exited %d, want 1", code)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("mcpx call: stderr %q does not say %q", stderr, w)
		}
	}
	// --timeout, shorter than the server's limit, says that it was the one.
	_, stderr, code = runCLI(t, "", "call", "--config", cfg, "--timeout", "200ms", "slow_sleep", `{"ms":600000}`)
	if code != 1 || !strings.Contains(stderr, "no answer within --timeout 200ms") {
		t.Errorf("mcpx call --timeout: exit %d, stderr %q", code, stderr)
	}
}

// TestMaxMessageBytesEndToEnd: a 128 MiB request line and a 128 MiB
// answer from an upstream, under maxMessageBytes 1 MiB, each get an error
// naming the size and the limit, mcpx's memory stays a small multiple of
// the limit, and the session goes on.
func TestMaxMessageBytesEndToEnd(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	cfg := writeConfig(t, map[string]any{"maxMessageBytes": "1MiB", "expose": "direct",
		"servers": map[string]any{"big": fx()}})
	c := startServe(t, cfg)
	c.initialize()
	if _, e := c.request("tools/list", map[string]any{}); e != nil {
		t.Fatalf("tools/list: %s", e.Message)
	}
	base := rssPeak(t, c.cmd.Process.Pid)

	// The id comes last, as the TypeScript SDK writes it.
	go func() {
		io.WriteString(c.stdin, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"big_echo","arguments":{"message":"`)
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 128 {
			if _, err := c.stdin.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(c.stdin, `"}},"id":"huge"}`+"\n")
	}()
	line := c.awaitID(`"huge"`, 60*time.Second)
	if !bytes.Contains(line, []byte("over the limit of 1 MiB")) || !bytes.Contains(line, []byte(`"code":-32600`)) ||
		!bytes.Contains(line, []byte("128 MiB")) {
		t.Errorf("answer to the huge request: %s", truncateForLog(line))
	}

	_, e := c.request("tools/call", map[string]any{"name": "big_big", "arguments": map[string]any{"bytes": 128 << 20}})
	if e == nil || !strings.Contains(e.Message, `server "big"`) || !strings.Contains(e.Message, "over the limit of 1 MiB") ||
		!strings.Contains(e.Message, "128 MiB") {
		t.Errorf("huge answer: %+v, want an error naming the server, the size and the limit", e)
	}
	peak := rssPeak(t, c.cmd.Process.Pid)
	t.Logf("mcpx peak RSS grew %.1f MiB (%.1fx the limit) over two 128 MiB messages", float64(peak-base)/(1<<20), float64(peak-base)/limit)
	if peak-base > 48*limit {
		t.Errorf("mcpx peak RSS grew %d MiB over two 128 MiB messages under a 1 MiB limit", (peak-base)>>20)
	}
	if _, e := c.request("ping", map[string]any{}); e != nil {
		t.Errorf("ping after it all: %s", e.Message)
	}
}

// stuckClient runs mcpx serve with its stdout read only on demand, so
// that the test can stop reading like a hung client.
type stuckClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *testenv.Buffer
}

func startStuck(t *testing.T, cfg string) *stuckClient {
	t.Helper()
	cmd := mcpxCommand("serve", "--stdio", "--config", cfg, "--log-level", "debug")
	// Under -race a process sleeps 1s at exit unless told not to; the
	// time logged below should be mcpx's own.
	cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	s := &stuckClient{cmd: cmd, stderr: &testenv.Buffer{}}
	cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("mcpx stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

func (s *stuckClient) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		t.Fatalf("write to mcpx: %v", err)
	}
}

// await reads lines until the answer with that raw id.
func (s *stuckClient) await(t *testing.T, id string) []byte {
	t.Helper()
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("mcpx output ended waiting for id %s: %v", id, err)
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) == nil && string(m.ID) == id {
			return line
		}
	}
}

// TestShutdownBoundedWithStuckPeers: with an upstream that stopped
// reading its stdin and ignores SIGTERM, and a client that stopped
// reading mcpx's stdout, stdin EOF, SIGTERM or SIGINT still ends mcpx
// within shutdownTimeout, with every child process gone.
func TestShutdownBoundedWithStuckPeers(t *testing.T) {
	for _, how := range []string{"stdin EOF", "SIGTERM", "SIGINT"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			pids := t.TempDir()
			cfg := writeConfig(t, map[string]any{"shutdownTimeout": "1s", "expose": "direct",
				"servers": map[string]any{"stuck": fx("--limit-tools", "--ignore-sigterm", "--grandchild", "--pid-dir", pids)}})
			s := startStuck(t, cfg)
			s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			s.await(t, "1")
			s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			waitPidFiles(t, pids, 2) // the server and its sleeper
			s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck_stop-reading"}}`)
			if line := s.await(t, "2"); !bytes.Contains(line, []byte("stopped reading")) {
				t.Fatalf("stop-reading: %s", line)
			}
			// Calls whose requests fill the pipe to the deaf server...
			big := strings.Repeat("m", 100<<10)
			for i := range 10 {
				s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"stuck_echo","arguments":{"message":%q}}}`, 100+i, big))
			}
			// ...and answers that fill the pipe to the client, which
			// reads no more.
			for i := range 400 {
				s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 1000+i))
			}
			start := time.Now()
			switch how {
			case "stdin EOF":
				s.stdin.Close()
			case "SIGTERM":
				s.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				s.cmd.Process.Signal(syscall.SIGINT)
			}
			if !waitExit(s.cmd, 30*time.Second) {
				t.Fatalf("mcpx did not exit within 30s of %s (shutdownTimeout 1s)", how)
			}
			t.Logf("mcpx exited %.1fx shutdownTimeout after %s", time.Since(start).Seconds(), how)
			testenv.Eventually(t, 5*time.Second, func() bool { return len(pidsAlive(t, pids)) == 0 },
				"child processes still running after mcpx exited")
		})
	}
}

// TestQuietShutdown: a server's request still waiting for the client when
// stdin closes is answered as its server is being stopped; nothing of that
// (mcp-go's "Error writing response ... file already closed") reaches
// stderr, which stays empty with --log-file, nor the log file.
func TestQuietShutdown(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"asker": fx("--ask-roots")}})
	for i := range 3 {
		logFile := filepath.Join(t.TempDir(), "mcpx.log")
		cmd := mcpxCommand("serve", "--stdio", "--config", cfg, "--log-file", logFile, "--log-level", "debug")
		var stderr testenv.Buffer
		cmd.Stderr = &stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewReader(stdout)
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
		io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("run %d: mcpx output ended before the server's roots/list arrived", i)
			}
			if bytes.Contains(line, []byte(`"method":"roots/list"`)) {
				break // never answered: the request is in flight at EOF
			}
		}
		stdin.Close()
		go io.Copy(io.Discard, out)
		if !waitExit(cmd, 30*time.Second) {
			cmd.Process.Kill()
			t.Fatalf("run %d: mcpx did not exit", i)
		}
		if s := stderr.String(); s != "" {
			t.Errorf("run %d: stderr with --log-file is not empty:\n%s", i, s)
		}
		logs, _ := os.ReadFile(logFile)
		for _, bad := range []string{"Error writing response", "file already closed"} {
			if bytes.Contains(logs, []byte(bad)) {
				t.Errorf("run %d: the log says %q:\n%s", i, bad, logs)
			}
		}
	}
}

// TestMaxConcurrentEndToEnd: maxConcurrent from the config holds for
// calls a client sends at once.
func TestMaxConcurrentEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"maxConcurrent": 8, "expose": "direct", "servers": map[string]any{
		"narrow": map[string]any{"command": fixture, "args": []string{"--limit-tools"}, "maxConcurrent": 2}}})
	c := startServe(t, cfg)
	c.initialize()
	for i := range 6 {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":"tools/call","params":{"name":"narrow_sleep","arguments":{"ms":200}}}`, i))
	}
	deadline := time.After(30 * time.Second)
	for i := 0; i < 6; {
		if !hasLine(c.stdoutLines(), fmt.Sprintf(`"id":"s%d","result":{"content":[{"type":"text","text":"slept 200ms"}]}`, i)) {
			select {
			case <-c.lines:
			case <-deadline:
				t.Fatalf("sleep %d got no answer within 30s", i)
			}
			continue
		}
		i++
	}
	res, e := c.request("tools/call", map[string]any{"name": "narrow_stats"})
	if e != nil || !bytes.Contains(res, []byte(`"peak":2`)) {
		t.Errorf("server stats %s %+v, want a peak of 2 calls at once", res, e)
	}
}

// TestCallBeforeOverlongLine: a call read together with an over-long line
// after it is still sent at once: the over-long line is answered with an
// error, and the call before it is not held back waiting for more input.
func TestCallBeforeOverlongLine(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"maxMessageBytes": "4KiB", "expose": "direct",
		"servers": map[string]any{"fx": fx()}})
	c := startServe(t, cfg)
	c.initialize()
	if _, e := c.request("tools/list", map[string]any{}); e != nil {
		t.Fatalf("tools/list: %s", e.Message)
	}
	// Both lines in one write, so that mcpx reads them together, and
	// nothing after them.
	c.send(`{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"hi"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"` +
		strings.Repeat("x", 8<<10) + `"}}}`)
	// The error for the over-long line comes first: it needs no upstream.
	if line := c.awaitID(`"long"`, 30*time.Second); !bytes.Contains(line, []byte(`"code":-32600`)) {
		t.Errorf("answer to the over-long line: %s", truncateForLog(line))
	}
	if line := c.awaitID(`"first"`, 30*time.Second); !bytes.Contains(line, []byte(`"hi"`)) {
		t.Errorf("answer to the call before the over-long line: %s", line)
	}
}
