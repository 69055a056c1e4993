package upstream_test

import (
	"bufio"
	"log/slog"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// startHTTPFixture runs the fixture over streamable HTTP with the given
// flags and returns its URL and its stderr (where it logs each GET).
func startHTTPFixture(t *testing.T, args ...string) (string, *testenv.Buffer) {
	t.Helper()
	cmd := exec.Command(fixturePath, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the fixture's lifeline
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("the HTTP fixture did not say where it listens: %q %v\n%s", line, err, stderr.String())
	}
	return url, &stderr
}

func httpServer(name, url string) config.Server {
	return config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Enabled: true, Timeout: 10 * time.Second}
}

// TestGETStreamFailureBacksOff: a server whose GET stream answers 500 is
// retried with a growing delay, and the log says so once, not once per
// attempt; mcp-go's own per-attempt ERROR lines are gone.
func TestGETStreamFailureBacksOff(t *testing.T) {
	t.Parallel()
	url, fixtureLog := startHTTPFixture(t, "--get-status", "500")
	var buf testenv.Buffer
	opts := fastOptions() // backoff 50ms doubling to 200ms
	opts.Logger = slog.New(log.NewWithOptions(&buf, log.Options{Level: log.DebugLevel}))
	connect(t, httpServer("flaky-get", url), opts)

	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(fixtureLog.String(), "GET stream request 5") },
		"the GET stream was not tried 5 times:\n%s", fixtureLog.String())
	logged := buf.String()
	if n := strings.Count(logged, "GET stream for server notifications failed"); n != 1 {
		t.Errorf("the failing GET stream was reported %d times, want once:\n%s", n, logged)
	}
	if strings.Contains(logged, "ERRO") {
		t.Errorf("a GET stream failure was logged as an error:\n%s", logged)
	}
	// The delays before attempts 2, 3, 4, 5, as announced at debug level.
	var delays []string
	for _, m := range regexp.MustCompile(`next attempt after backoff server=\S+ in=(\S+)`).FindAllStringSubmatch(logged, -1) {
		delays = append(delays, m[1])
	}
	if want := []string{"50ms", "100ms", "200ms", "200ms"}; len(delays) < 4 || strings.Join(delays[:4], " ") != strings.Join(want, " ") {
		t.Errorf("backoff delays %v, want to start %v:\n%s", delays, want, logged)
	}
}

// TestGETStream405IsNormal: a server without a GET stream (405) is not an
// error: nothing above debug level is logged about it, and the
// connection works.
func TestGETStream405IsNormal(t *testing.T) {
	t.Parallel()
	url, fixtureLog := startHTTPFixture(t, "--get-status", "405")
	var buf testenv.Buffer
	opts := fastOptions()
	opts.Logger = slog.New(log.NewWithOptions(&buf, log.Options{Level: log.DebugLevel}))
	c := connect(t, httpServer("no-get", url), opts)
	testenv.Eventually(t, 10*time.Second, func() bool { return strings.Contains(buf.String(), "has no GET stream (405)") },
		"the 405 was not noted; log:\n%s\nfixture:\n%s", buf.String(), fixtureLog.String())
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, "ERRO") || strings.Contains(line, "WARN") {
			t.Errorf("a 405 GET stream was reported above debug level: %s", line)
		}
	}
	if got := mustCallText(t, c, "echo", map[string]any{"message": "over http"}); got != "over http" {
		t.Errorf("echo = %q", got)
	}
	if st := c.Status(); st.State != upstream.StateConnected {
		t.Errorf("state %s, want connected", st.State)
	}
}
