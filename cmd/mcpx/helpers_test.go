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
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// writeConfig writes an mcpx config into a temp dir and returns its path.
func writeConfig(t testing.TB, cfg any) string {
	t.Helper()
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "mcpx.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fx is a fixture server entry for a config.
func fx(args ...string) map[string]any {
	return map[string]any{"command": fixture, "args": args, "timeout": "5s"}
}

// mcpxCommand returns the mcpx program (this test binary acting as main).
func mcpxCommand(args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cache, _ := os.MkdirTemp(testDir, "cache-")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "XDG_CACHE_HOME="+cache)
	return cmd
}

// runCLI runs mcpx in process and returns stdout, stderr and the exit code.
func runCLI(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return out.String(), errb.String(), code
}

// rawClient speaks raw JSON-RPC lines to `mcpx serve --stdio`, keeping
// every line mcpx writes on stdout for later checks.
type rawClient struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testenv.Buffer
	lines  chan []byte
	done   chan struct{} // closed when stdout ends

	mu    sync.Mutex
	all   [][]byte // every stdout line, in order
	notes []json.RawMessage
	id    int
}

func startServe(t testing.TB, config string, extra ...string) *rawClient {
	t.Helper()
	return startServeEnv(t, config, nil, extra...)
}

// startServeEnv is startServe with more environment variables (later
// ones win), e.g. an XDG_CACHE_HOME shared by two runs.
func startServeEnv(t testing.TB, config string, env []string, extra ...string) *rawClient {
	t.Helper()
	cmd := mcpxCommand(append([]string{"serve", "--stdio", "--config", config}, extra...)...)
	cmd.Env = append(cmd.Env, env...)
	c := &rawClient{t: t, cmd: cmd, stderr: &testenv.Buffer{}, lines: make(chan []byte, 1024), done: make(chan struct{})}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				c.mu.Lock()
				c.all = append(c.all, line)
				c.mu.Unlock()
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		if !waitExit(cmd, 10*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("mcpx stderr:\n%s", c.stderr.String())
		}
	})
	return c
}

// waitExit waits for cmd to exit and reports whether it did in time.
func waitExit(cmd *exec.Cmd, d time.Duration) bool {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func (c *rawClient) send(msg string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, msg+"\n"); err != nil {
		c.t.Fatalf("write to mcpx: %v", err)
	}
}

// request sends a request and waits for its response, keeping the
// notifications that arrive meanwhile.
func (c *rawClient) request(method string, params any) (result json.RawMessage, rpcErr *struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}) {
	c.t.Helper()
	c.mu.Lock()
	c.id++
	id := c.id
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line := <-c.lines:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int             `json:"code"`
					Message string          `json:"message"`
					Data    json.RawMessage `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				c.t.Fatalf("mcpx wrote a line that is not JSON: %q", truncateForLog(line))
			}
			if m.Method != "" && len(m.ID) == 0 {
				c.mu.Lock()
				c.notes = append(c.notes, line)
				c.mu.Unlock()
				continue
			}
			if string(m.ID) == strconv.Itoa(id) {
				return m.Result, m.Error
			}
		case <-c.done:
			c.t.Fatalf("mcpx closed stdout waiting for %s; stderr:\n%s", method, c.stderr.String())
		case <-deadline:
			c.t.Fatalf("no answer to %s within 30s", method)
		}
	}
}

// initialize performs the MCP handshake.
func (c *rawClient) initialize() json.RawMessage {
	c.t.Helper()
	res, e := c.request("initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw-test", "version": "1"},
	})
	if e != nil {
		c.t.Fatalf("initialize: %s", e.Message)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// waitNotification waits until a notification with method has arrived.
func (c *rawClient) waitNotification(method string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c.countNotes(method) > 0 {
			return true
		}
		select {
		case line := <-c.lines:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method != "" && len(m.ID) == 0 {
				c.mu.Lock()
				c.notes = append(c.notes, line)
				c.mu.Unlock()
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	return c.countNotes(method) > 0
}

func (c *rawClient) countNotes(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, raw := range c.notes {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Method == method {
			n++
		}
	}
	return n
}

func (c *rawClient) stdoutLines() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.all...)
}

func truncateForLog(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// pidsAlive returns the pids recorded in a fixture --pid-dir that still
// run. A zombie counts as gone: it no longer runs, it only waits for init.
func pidsAlive(t testing.TB, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var alive []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		if processAlive(pid) {
			alive = append(alive, pid)
		}
	}
	return alive
}

// waitPidFiles waits until dir holds at least n pid files.
func waitPidFiles(t testing.TB, dir string, n int) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() bool {
		entries, _ := os.ReadDir(dir)
		return len(entries) >= n
	}, "fewer than %d pid files in %s", n, dir)
}

// requireEverything returns the path of server-everything's entry point
// once the Node test peers are there (see [testenv.NeedNodePeers]).
func requireEverything(t testing.TB) string {
	t.Helper()
	return filepath.Join(testenv.NeedNodePeers(t), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}
