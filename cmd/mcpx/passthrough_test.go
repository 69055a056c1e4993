package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// passthroughResult is what testdata/node/e2e-passthrough.mjs prints.
type passthroughResult struct {
	Error   string
	Tools   []string
	Logs    []struct{ Level, Logger string }
	Updates []string
	Seen    struct {
		Sampling    map[string]any
		Elicitation map[string]any
		RootsAsked  int
	}
	Sampling, Elicitation, Roots1, Roots2, Logging, Subscriber any
	Completion                                                 any
}

func runPassthroughClient(t *testing.T, noCaps bool) passthroughResult {
	t.Helper()
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
	}})
	exe, _ := os.Executable()
	cmd := exec.Command("node", "../../testdata/node/e2e-passthrough.mjs", exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	if noCaps {
		cmd.Env = append(cmd.Env, "E2E_NO_CAPS=1")
	}
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, err := runWithin(cmd, 60*time.Second)
	var r passthroughResult
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil || r.Error != "" {
		t.Fatalf("client: %v %v %s\nstdout: %s\nstderr: %s", err, jerr, r.Error, out, stderr.String())
	}
	return r
}

func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServeRelaysClientFeatures drives server-everything through mcpx with
// the TypeScript SDK client declaring sampling, elicitation and roots:
// each upstream request reaches the client and its answer goes back; log
// level, log messages, completion and subscriptions pass through.
func TestServeRelaysClientFeatures(t *testing.T) {
	r := runPassthroughClient(t, false)
	if !strings.Contains(text(r.Sampling), "sampled reply from the client") || r.Seen.Sampling == nil {
		t.Errorf("sampling: %s (client saw %v)", text(r.Sampling), r.Seen.Sampling)
	}
	if !strings.Contains(text(r.Elicitation), "Ada Lovelace") || r.Seen.Elicitation["requestedSchema"] == nil {
		t.Errorf("elicitation: %s (client saw %v)", text(r.Elicitation), r.Seen.Elicitation)
	}
	if !strings.Contains(text(r.Roots1), "file:///first") {
		t.Errorf("roots: %s", text(r.Roots1))
	}
	if !strings.Contains(text(r.Roots2), "file:///second") {
		t.Errorf("roots after the client changed them: %s", text(r.Roots2))
	}
	if c := text(r.Completion); c != `["Engineering"]` {
		t.Errorf("completion = %s, want [\"Engineering\"]", c)
	}
	if len(r.Updates) == 0 || r.Updates[0] != "demo://resource/static/document/architecture.md" {
		t.Errorf("resource updates = %v", r.Updates)
	}
	if len(r.Logs) == 0 {
		t.Fatal("no log message reached the client")
	}
	for _, l := range r.Logs {
		if !strings.HasPrefix(l.Logger, "everything") {
			t.Errorf("log message with logger %q, want the upstream's name", l.Logger)
		}
	}
}

// TestServeRefusesUndeclaredFeatures: with a client that declares none of
// the capabilities, each upstream request gets a clear error at once.
func TestServeRefusesUndeclaredFeatures(t *testing.T) {
	start := time.Now()
	r := runPassthroughClient(t, true)
	for name, v := range map[string]any{"sampling": r.Sampling, "elicitation": r.Elicitation} {
		if !strings.Contains(text(v), "did not declare the "+name+" capability") {
			t.Errorf("%s: %s", name, text(v))
		}
	}
	if strings.Contains(text(r.Roots1), "file:///") {
		t.Errorf("roots without the capability: %s", text(r.Roots1))
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %s: something waited for a timeout", took)
	}
}

// TestServeNotificationOrder: 100 concurrent calls on three upstreams,
// each with its own progress token: every call's progress arrives, with
// its own token, before its response and never after.
func TestServeNotificationOrder(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"a": fx(), "b": fx(), "c": fx(),
	}})
	c := startServe(t, cfg)
	c.initialize()
	c.request("tools/list", map[string]any{})
	const calls = 100
	for i := range calls {
		server := []string{"a", "b", "c"}[i%3]
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s_sleep","arguments":{"ms":%d},"_meta":{"progressToken":"tok-%d"}}}`,
			1000+i, server, 20+i%7*10, i))
	}
	progress := map[string]int{}
	answered := map[int]bool{}
	short := map[int]int{} // calls answered with fewer progress notifications, and how many
	deadline := time.After(60 * time.Second)
	for len(answered) < calls {
		select {
		case line := <-c.lines:
			var m struct {
				ID     *int   `json:"id"`
				Method string `json:"method"`
				Params struct {
					ProgressToken string `json:"progressToken"`
				} `json:"params"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("bad line %q", line)
			}
			switch {
			case m.Method == "notifications/progress":
				var n int
				fmt.Sscanf(m.Params.ProgressToken, "tok-%d", &n)
				if answered[1000+n] {
					t.Errorf("progress for %s after its response", m.Params.ProgressToken)
				}
				progress[m.Params.ProgressToken]++
			case m.ID != nil:
				if len(m.Error) > 0 {
					t.Fatalf("call %d failed: %s", *m.ID, m.Error)
				}
				if got := progress[fmt.Sprintf("tok-%d", *m.ID-1000)]; got > 4 {
					t.Errorf("call %d answered after %d progress notifications, want 4", *m.ID, got)
				} else if got < 4 {
					short[*m.ID] = got
				}
				answered[*m.ID] = true
			}
		case <-deadline:
			t.Fatalf("%d of %d answered", len(answered), calls)
		}
	}
	// A client that falls a whole queue behind loses notifications (never
	// an answer), and mcpx says so in its log: on a loaded machine this
	// test's reader can. Without that line every call has all four.
	if strings.Contains(c.stderr.String(), "dropping notifications until it does") {
		t.Logf("%d calls lost progress to a lagging reader, as logged", len(short))
		return
	}
	for id, got := range short {
		t.Errorf("call %d answered after %d of its 4 progress notifications, and no drop was logged", id, got)
	}
	if len(progress) != calls {
		t.Errorf("progress for %d tokens, want %d", len(progress), calls)
	}
}
