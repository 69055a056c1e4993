package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestControlCharactersEscaped: an upstream that writes terminal escape
// sequences and other control characters on stderr (here also in its
// exit error) cannot drive the user's terminal through mcpx's logs or the
// servers table: each control character shows as a visible escape.
func TestControlCharactersEscaped(t *testing.T) {
	const hostile = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m \u202eevil\rover\u009b2J"
	logFile := filepath.Join(t.TempDir(), "mcpx.log")
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"loud":  fx("--stderr", hostile),
		"dying": fx("--exit-at-start", "2", "--stderr", hostile),
	}})
	out, errOut, _ := runCLI(t, "", "servers", "--log-level", "debug", "--config", cfg)
	_, _, _ = runCLI(t, "", "servers", "--log-level", "debug", "--log-file", logFile, "--config", cfg)
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"servers table": out, "stderr log": errOut, "log file": string(logged)} {
		if i := strings.IndexFunc(text, func(r rune) bool {
			return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e')
		}); i >= 0 {
			t.Errorf("%s holds a raw control character %q at %d:\n%q", what, text[i:i+1], i, text)
		}
		if !strings.Contains(text, `\x1b[31mred\x1b[0m \u202eevil\rover\u009b2J`) {
			t.Errorf("%s does not show the upstream's text with visible escapes:\n%s", what, text)
		}
	}
	// A tab or newline in a cell does not break the tab-separated row.
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := strings.Count(line, "\t"); n != 8 {
			t.Errorf("row with %d tabs, want 8 (9 columns): %q", n, line)
		}
	}
}
