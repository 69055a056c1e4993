package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestServeProgressAndCancel: a client's progress token reaches the
// upstream as a token of mcpx's own and comes back restored, before the
// response; two concurrent calls never mix; cancelling a call cancels the
// upstream request under the upstream's own request id.
func TestServeProgressAndCancel(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
		"fx":         fx(),
	}})
	c := startServe(t, cfg)
	c.initialize()
	c.request("tools/list", map[string]any{})

	// Two long calls at once, with tokens of different JSON types.
	c.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"everything_trigger-long-running-operation","arguments":{"duration":1,"steps":4},"_meta":{"progressToken":"tok-a"}}}`)
	c.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fx_sleep","arguments":{"ms":500},"_meta":{"progressToken":42}}}`)
	seen := map[string][]float64{} // token -> progress values
	answered := map[string]bool{}
	deadline := time.After(20 * time.Second)
	for len(answered) < 2 {
		select {
		case line := <-c.lines:
			var m struct {
				ID     string `json:"id"`
				Method string `json:"method"`
				Params struct {
					ProgressToken json.RawMessage `json:"progressToken"`
					Progress      float64         `json:"progress"`
				} `json:"params"`
			}
			json.Unmarshal(line, &m)
			switch {
			case m.Method == "notifications/progress":
				tok := string(m.Params.ProgressToken)
				if (tok == `"tok-a"` && answered["a"]) || (tok == "42" && answered["b"]) {
					t.Errorf("progress for %s after its response", tok)
				}
				seen[tok] = append(seen[tok], m.Params.Progress)
			case m.ID != "":
				answered[m.ID] = true
			}
		case <-deadline:
			t.Fatalf("answers so far %v, progress %v", answered, seen)
		}
	}
	if len(seen[`"tok-a"`]) != 4 || len(seen["42"]) == 0 {
		t.Errorf("progress by token = %v, want 4 for tok-a and some for 42", seen)
	}
	for tok := range seen {
		if tok != `"tok-a"` && tok != "42" {
			t.Errorf("progress carried a token the client never sent: %s", tok)
		}
	}

	// Cancel a sleeping call: no answer for it, and the upstream is told
	// with its own id, which is not the client's.
	c.send(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"fx_sleep","arguments":{"ms":10000}}}`)
	// Cancel once the call has reached the upstream (it logs the start of
	// the sleep, which mcpx relays to its stderr).
	testenv.Eventually(t, 10*time.Second, func() bool { return strings.Contains(c.stderr.String(), "sleep 10000ms: started") },
		"the call never reached the upstream:\n%s", c.stderr)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"user"}}`)
	testenv.Eventually(t, 3*time.Second, func() bool { return strings.Contains(c.stderr.String(), `cancelling request "mcpx-`) },
		"the upstream was not told of the cancellation:\n%s", c.stderr)
	if res, e := c.request("ping", map[string]any{}); e != nil || res == nil {
		t.Fatalf("ping after cancel: %v", e)
	}
	for _, line := range c.stdoutLines() {
		if strings.Contains(string(line), `"id":99`) {
			t.Errorf("a cancelled request was answered: %s", line)
		}
	}
}

// TestClientLeavingCancelsCalls: when the client goes, a call still in
// flight is cancelled at its upstream, which is told with its own id, and
// mcpx ends without waiting for the call's answer.
func TestClientLeavingCancelsCalls(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx()}})
	c := startServe(t, cfg)
	c.initialize()
	c.request("tools/list", map[string]any{})
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx_sleep","arguments":{"ms":60000}}}`)
	c.waitStderr(10*time.Second, "sleep 60000ms: started") // the call reached the upstream
	c.stop()
	log := c.stderr.String()
	if !strings.Contains(log, `cancelling request "mcpx-`) {
		t.Errorf("the upstream was not told that the call was cancelled:\n%s", log)
	}
	if strings.Contains(log, "calls still running") {
		t.Errorf("mcpx waited for a call of a client that had gone:\n%s", log)
	}
}
