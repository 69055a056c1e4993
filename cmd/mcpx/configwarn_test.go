package main

import (
	"strings"
	"testing"
)

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
