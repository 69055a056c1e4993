package main

import (
	"strings"
	"testing"
)

// TestLogLinesNamedByServer: every log line names who spoke before its
// message, as "name:": an upstream's stderr and its connection events
// under the server's name, mcpx's own lines under "mcpx". The libraries
// log through log/slog with a server attribute; mcpx renders it so.
func TestLogLinesNamedByServer(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"talker": fx("--stderr", "hello from talker"),
	}})
	cmd := mcpxCommand("list", "tools", "--log-level", "info", "--config", cfg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpx list tools: %v\n%s", err, stderr.String())
	}
	errOut := stderr.String()
	for _, want := range []string{
		"talker: hello from talker stream=stderr",
		"talker: connected tools=",
		"mcpx: config loaded file=",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no log line with %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "server=talker") {
		t.Errorf("the server's name is shown as an attribute, not as the line's prefix:\n%s", errOut)
	}
}
