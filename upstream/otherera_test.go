package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// callAs calls tool as a client of the modern era does through mcpx
// (PassInput), or as a legacy one, and returns its text.
func callAs(t *testing.T, c *upstream.Client, modern bool, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	raw, err := c.RequestWith(ctx, "tools/call", toolParams(t, tool, args), &upstream.CallOptions{PassInput: modern})
	if err != nil {
		t.Fatalf("call %s (modern caller %v): %v", tool, modern, err)
	}
	res := decodeResult(t, raw)
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("call %s (modern caller %v): %s", tool, modern, truncate(raw))
	}
	return res.Content[0].Text
}

// modernCall calls echo with "hi", as a modern caller or a legacy one.
func modernCall(t *testing.T, c *upstream.Client, modern bool) string {
	t.Helper()
	return callAs(t, c, modern, "echo", map[string]any{"message": "hi"})
}

// posts returns the POSTs since the last call, each "method version",
// and forgets them.
func (s *goSDKServer) posts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

// toolCalls are the protocol versions of the tools/call POSTs in seen.
func toolCalls(seen []string) []string {
	var out []string
	for _, m := range seen {
		if v, ok := strings.CutPrefix(m, "tools/call "); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestOtherEra: under protocol auto a server that speaks both eras is
// connected in the legacy one; a modern caller's request goes over a
// second connection in the modern era, opened on that first request, and
// a legacy caller's stays on the first. The second connection closes
// after OtherEraIdle without requests and opens again for the next one;
// it closes with the Client.
func TestOtherEra(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, dualEra)
	opts := fastOptions()
	opts.OtherEraIdle = 200 * time.Millisecond
	c := connect(t, remoteServer("gosdk", s.url+"/mcp"), opts)
	if era := upstream.EraOf(c.Status().ProtocolVersion); era != upstream.EraLegacy {
		t.Fatalf("connected in era %q, want legacy", era)
	}
	s.posts()

	if got := modernCall(t, c, false); got != "echo: hi" {
		t.Errorf("legacy caller: %q", got)
	}
	if c.OtherEra() {
		t.Error("a legacy caller's request opened a second connection")
	}
	if got := modernCall(t, c, true); got != "echo: hi" {
		t.Errorf("modern caller: %q", got)
	}
	if !c.OtherEra() {
		t.Error("a modern caller's request opened no second connection")
	}
	seen := s.posts()
	if got := toolCalls(seen); len(got) != 2 || got[0] >= "2026-07-28" || got[1] != "2026-07-28" {
		t.Errorf("tools/call versions %q (POSTs %q), want a legacy one, then 2026-07-28", got, seen)
	}
	if !slices.Contains(seen, "server/discover 2026-07-28") {
		t.Errorf("the second connection made no modern handshake: %q", seen)
	}
	if st := c.Status(); upstream.EraOf(st.ProtocolVersion) != upstream.EraLegacy || st.State != upstream.StateConnected {
		t.Errorf("the first connection is %s in %q now", st.State, st.ProtocolVersion)
	}

	testenv.Eventually(t, 10*time.Second, func() bool { return !c.OtherEra() }, "the second connection outlived its idle time")
	if got := modernCall(t, c, true); got != "echo: hi" {
		t.Errorf("modern caller after the idle close: %q", got)
	}
	if got := toolCalls(s.posts()); !slices.Equal(got, []string{"2026-07-28"}) {
		t.Errorf("tools/call after the idle close went as %q, want 2026-07-28", got)
	}
	c.Close()
	if c.OtherEra() {
		t.Error("the second connection outlived Close")
	}
}

// TestOtherEraLegacyAsker: a tool that asks its client the legacy way,
// which the server refuses in a modern request, is called again over the
// legacy connection for a modern caller, its question going to
// OnServerRequest as a legacy caller's does; from then on that tool goes
// there at once, and the server's other tools still go in the modern era.
func TestOtherEraLegacyAsker(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, dualEra)
	opts := fastOptions()
	var asked atomic.Int32
	opts.OnServerRequest = func(_ context.Context, _, method string, _ json.RawMessage) (json.RawMessage, error) {
		if method != "elicitation/create" {
			return nil, fmt.Errorf("unexpected %s", method)
		}
		asked.Add(1)
		return json.RawMessage(`{"action":"accept","content":{}}`), nil
	}
	c := connect(t, remoteServer("gosdk", s.url+"/mcp"), opts)
	s.posts()

	if got := callAs(t, c, true, "ask_legacy", nil); got != "answered: accept" {
		t.Errorf("first call: %q, want the answer through the legacy connection", got)
	}
	if got := toolCalls(s.posts()); len(got) != 2 || got[0] != "2026-07-28" || got[1] >= "2026-07-28" {
		t.Errorf("tools/call versions %q, want 2026-07-28 (refused), then the legacy era", got)
	}
	if got := callAs(t, c, true, "ask_legacy", nil); got != "answered: accept" {
		t.Errorf("second call: %q", got)
	}
	if got := toolCalls(s.posts()); len(got) != 1 || got[0] >= "2026-07-28" {
		t.Errorf("second call went as %q, want the legacy era at once", got)
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("the question reached OnServerRequest %d times, want 2", n)
	}
	modernCall(t, c, true)
	if got := toolCalls(s.posts()); !slices.Equal(got, []string{"2026-07-28"}) {
		t.Errorf("another tool went as %q, want 2026-07-28", got)
	}
}

// TestOtherEraNot: a modern caller's request stays on the one connection
// where there is no other era to speak: the server speaks only the
// legacy one, or the config asks for the legacy era.
func TestOtherEraNot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, era string
		protocol  config.Protocol
	}{
		{"legacy-only server", legacyOnly, ""},
		{"protocol legacy", dualEra, config.ProtocolLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startGoSDKServer(t, tc.era)
			cfg := remoteServer("gosdk", s.url+"/mcp")
			cfg.Protocol = tc.protocol
			c := connect(t, cfg, nil)
			modernCall(t, c, true)
			if c.OtherEra() {
				t.Error("a second connection was opened")
			}
			if got := toolCalls(s.posts()); len(got) != 1 || got[0] >= "2026-07-28" {
				t.Errorf("tools/call went as %q, want the legacy era", got)
			}
		})
	}
}

// TestOtherEraStdio: over stdio the second connection is a second child
// of the server's command, which a modern caller's first request starts
// and the idle time ends: no process of it is left once it closed, nor
// once the Client closed.
func TestOtherEraStdio(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	reference := testenv.GoTool(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	srv := config.Server{Name: "gosdk", Transport: config.TransportStdio, Command: reference, Enabled: true, Timeout: 10 * time.Second}
	opts := fastOptions()
	opts.OtherEraIdle = 200 * time.Millisecond
	c := connect(t, srv, opts)
	running := func() int { return len(processesOf(reference)) }
	if n := running(); n != 1 {
		t.Fatalf("%d processes of the server after connect, want 1", n)
	}
	call := func(modern bool) { callAs(t, c, modern, "test_simple_text", map[string]any{}) }
	call(false)
	if n := running(); n != 1 || c.OtherEra() {
		t.Errorf("a legacy caller's request: %d processes, second connection %v; want 1, none", n, c.OtherEra())
	}
	call(true)
	if n := running(); n != 2 || !c.OtherEra() {
		t.Errorf("a modern caller's request: %d processes, second connection %v; want 2, one", n, c.OtherEra())
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return !c.OtherEra() && running() == 1 },
		"the second child outlived its idle time")
	call(true)
	c.Close()
	testenv.Eventually(t, 10*time.Second, func() bool { return running() == 0 }, "processes of the server left after Close")
}

// TestOtherEraStdioChange: over stdio the second connection is a process
// of its own, so a change a modern caller's call makes to its tools
// becomes the server's catalog, as that caller expects to see it.
func TestOtherEraStdioChange(t *testing.T) {
	t.Parallel()
	reference := testenv.GoTool(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	srv := config.Server{Name: "gosdk", Transport: config.TransportStdio, Command: reference, Enabled: true, Timeout: 10 * time.Second}
	c := connect(t, srv, fastOptions())
	names := func() []string {
		var out []string
		for _, raw := range c.Tools() {
			var tool struct{ Name string }
			json.Unmarshal(raw, &tool)
			out = append(out, tool.Name)
		}
		slices.Sort(out)
		return out
	}
	before := names()
	callAs(t, c, true, "test_simple_text", map[string]any{}) // opens the second connection
	if got := names(); !slices.Equal(got, before) {
		t.Errorf("the second connection's first catalog changed the tools: %q, was %q", got, before)
	}
	callAs(t, c, true, "test_trigger_tool_change", map[string]any{})
	testenv.Eventually(t, 10*time.Second, func() bool { return !slices.Equal(names(), before) },
		"the change made over the second connection never reached the catalog")
}

// processesOf are the live processes (not zombies) running exe.
func processesOf(exe string) []int {
	var out []int
	dir, _ := os.ReadDir("/proc")
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && target == exe && procState(pid) != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// TestOtherEraRemembered: that the server speaks both eras is remembered
// with its catalog, so a start that goes straight to initialize, without
// server/discover, still sends a modern caller's request in the modern
// era.
func TestOtherEraRemembered(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, dualEra)
	opts := fastOptions()
	opts.CacheDir = t.TempDir()
	cfg := remoteServer("gosdk", s.url+"/mcp")
	connect(t, cfg, opts).Close()
	s.posts()
	c := connect(t, cfg, opts)
	if seen := s.posts(); slices.ContainsFunc(seen, func(m string) bool { return strings.HasPrefix(m, "server/discover") }) {
		t.Fatalf("the second start probed again: %q", seen)
	}
	modernCall(t, c, true)
	if got := toolCalls(s.posts()); !slices.Equal(got, []string{"2026-07-28"}) {
		t.Errorf("tools/call went as %q, want 2026-07-28", got)
	}
}
