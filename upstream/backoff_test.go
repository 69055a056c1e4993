package upstream_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"
)

// TestRepeatedFailureLoggedOnce: a server that fails the same way at
// every retry under serve gives one record above debug, an error, for
// all its attempts; the retries are debug records. Its stderr lines,
// logged as they come, are left out of the count.
func TestRepeatedFailureLoggedOnce(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := log.NewWithOptions(&buf, log.Options{Level: log.DebugLevel, Formatter: log.JSONFormatter})
	opts := fastOptions()
	opts.Reconnect = true
	opts.MinBackoff, opts.MaxBackoff = time.Millisecond, 20*time.Millisecond
	opts.Logger = logger
	c := startClient(t, stdioServer("broken", "--exit-at-start", "3"), opts)
	const attempts = 5
	eventually(t, 30*time.Second, func() bool { return c.Status().Attempts > attempts },
		"fewer than %d attempts", attempts)
	c.Close()

	levels := map[string]int{}
	failures := 0
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if rec["stream"] == "stderr" {
			continue
		}
		if _, ok := rec["err"]; ok {
			failures++
		}
		if rec["level"] != "debug" {
			levels[rec["level"].(string)]++
		}
	}
	if failures < attempts {
		t.Fatalf("%d failure records for more than %d attempts:\n%s", failures, attempts, buf.String())
	}
	if len(levels) != 1 || levels["error"] != 1 {
		t.Errorf("records above debug by level = %v, want one error:\n%s", levels, buf.String())
	}
}
