package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOverLimitEscapes: an upstream's answer over maxMessageBytes that
// is one long run of escapes (as a text file read by a filesystem server
// is) fails its call with the limit error, where skimming it once took
// minutes and the call ended at callTimeout, and the server's next
// answers flow: through mcpx call and under serve --stdio.
func TestOverLimitEscapes(t *testing.T) {
	t.Parallel()
	// callTimeout only bounds a regression: the answer is refused in
	// milliseconds.
	cfg := writeConfig(t, map[string]any{"maxMessageBytes": "2MiB", "callTimeout": "20s", "expose": "direct",
		"servers": map[string]any{"esc": fx()}})
	// 3 MiB of backslashes: 6 MiB of "\\" on the wire.
	const huge = `{"bytes":3145728,"fill":"\\"}`
	want := []string{`server "esc"`, "6 MiB", "over the limit of 2 MiB"}

	t.Run("call", func(t *testing.T) {
		_, stderr, code := runCLI(t, "", "call", "--config", cfg, "esc_big", huge)
		if code != 1 {
			t.Errorf("mcpx call of the huge answer exited %d, want 1", code)
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("mcpx call of the huge answer: stderr %q does not say %q", stderr, w)
			}
		}
		out, stderr, code := runCLI(t, "", "call", "--config", cfg, "esc_echo", `{"message":"after"}`)
		if code != 0 || !strings.Contains(out, "after") {
			t.Errorf("mcpx call esc_echo: exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})

	t.Run("serve", func(t *testing.T) {
		c := startServe(t, cfg)
		c.initialize()
		_, e := c.request("tools/call", map[string]any{"name": "esc_big", "arguments": json.RawMessage(huge)})
		if e == nil {
			t.Fatal("the huge answer came back as a result, want an error")
		}
		for _, w := range want {
			if !strings.Contains(e.Message, w) {
				t.Errorf("huge answer: error %q does not say %q", e.Message, w)
			}
		}
		// The same server answers next.
		res, e := c.request("tools/call", map[string]any{"name": "esc_echo", "arguments": map[string]any{"message": "after"}})
		if e != nil || !strings.Contains(string(res), "after") {
			t.Fatalf("echo after the huge answer: %s %+v", res, e)
		}
		if n := strings.Count(c.stderr.String(), "over the limit of 2 MiB"); n != 1 {
			t.Errorf("the limit is logged %d times, want once:\n%s", n, c.stderr.String())
		}
	})
}
