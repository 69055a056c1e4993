package main

import (
	"strings"
	"testing"
)

// "separator": "." makes every tool name invalid for clients, so each
// shows _ in its place: mcpx says the separator is the cause, on every
// command's stderr and in doctor (issue 31, item 7).
func TestSeparatorWarning(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"separator": ".", "servers": map[string]any{"fx": fx("--name", "fx")}})
	const cause = `separator: "." has a character tool names may not have`

	out, errOut, code := runCLI(t, "", "list", "tools", "--config", cfg)
	if code != 0 || !strings.Contains(out, "fx_echo\t") || strings.Contains(out, "fx.echo") || !strings.Contains(errOut, cause) {
		t.Errorf("list tools: exit %d; want 0, fx_echo and the cause on stderr\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, _, _ = runCLI(t, "", "doctor", "--config", cfg)
	if !strings.Contains(out, cause) || !strings.Contains(out, "every prefixed tool and prompt name shows _ in its place") {
		t.Errorf("doctor does not name the separator as the cause:\n%s", out)
	}
	// The flag is named when the flag set it.
	if _, errOut, _ = runCLI(t, "", "list", "tools", "--separator", ":", "--config", cfg); !strings.Contains(errOut, `--separator: ":" has a character`) {
		t.Errorf("list tools --separator ':': stderr lacks the cause:\n%s", errOut)
	}
}

// A misspelt top-level key is warned about with the closest known key,
// as a server's keys are (issue 31, item 15).
func TestTopLevelKeyTypo(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"expse": "direct", "servers": map[string]any{"fx": fx("--name", "fx")}})
	_, errOut, code := runCLI(t, "", "servers", "--config", cfg)
	if code != 0 || !strings.Contains(errOut, "expse: unknown key, ignored; did you mean expose?") {
		t.Errorf("servers: exit %d; want 0 and a warning suggesting expose\n%s", code, errOut)
	}
	out, _, _ := runCLI(t, "", "doctor", "--config", cfg)
	if !strings.Contains(out, "did you mean expose?") {
		t.Errorf("doctor lacks the suggestion:\n%s", out)
	}
}
