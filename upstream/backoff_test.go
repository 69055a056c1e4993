package upstream_test

import (
	"bufio"
	"encoding/json"
	"github.com/mcpx/mcpx/internal/testenv"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestRepeatedFailureLoggedOnce: a server that fails the same way at
// every retry under serve is logged above debug only for its first
// attempt: one error and the stderr lines it printed then. The retries,
// and the stderr lines they print (a pid each time), are debug records.
func TestRepeatedFailureLoggedOnce(t *testing.T) {
	t.Parallel()
	var buf testenv.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := fastOptions()
	opts.Reconnect = true
	opts.MinBackoff, opts.MaxBackoff = time.Millisecond, 20*time.Millisecond
	opts.Logger = logger
	c := startClient(t, stdioServer("broken", "--exit-at-start", "3"), opts)
	const attempts = 5
	testenv.Eventually(t, 30*time.Second, func() bool { return c.Status().Attempts > attempts },
		"fewer than %d attempts", attempts)
	c.Close()

	var errs, failures, lateAbove int
	seenDebug := false
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if _, ok := rec["err"]; ok {
			failures++
		}
		switch rec["level"] {
		case "DEBUG":
			seenDebug = true
		case "ERROR":
			errs++
			fallthrough
		default:
			if seenDebug {
				lateAbove++
			}
		}
	}
	if failures < attempts {
		t.Fatalf("%d failure records for more than %d attempts:\n%s", failures, attempts, buf.String())
	}
	if errs != 1 || lateAbove != 0 {
		t.Errorf("%d error records (want 1) and %d records above debug after the first retry (want 0):\n%s", errs, lateAbove, buf.String())
	}
}
