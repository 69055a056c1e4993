package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

func TestBigResult(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("big"), nil)
	text := mustCallText(t, c, "big", nil)
	const size = 5 << 20
	if len(text) != size {
		t.Fatalf("text is %d bytes, want %d", len(text), size)
	}
	const pattern = "0123456789abcdef"
	for i := range len(text) {
		if text[i] != pattern[i%16] {
			t.Fatalf("byte %d is %q, want %q", i, text[i], pattern[i%16])
		}
	}
	// The connection is still in step after the big line.
	if got := mustCallText(t, c, "echo", map[string]any{"message": "after"}); got != "after" {
		t.Errorf("echo after big = %q", got)
	}
}

func TestEnvAndCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := stdioServer("envcwd")
	srv.Env = map[string]string{"MCPX_TEST_VAR": "x1"}
	srv.Cwd = dir
	c := connect(t, srv, nil)

	if got := mustCallText(t, c, "env", map[string]any{"name": "MCPX_TEST_VAR"}); got != "x1" {
		t.Errorf("MCPX_TEST_VAR = %q, want x1", got)
	}
	// The supervisor's own marker must not reach the server.
	raw, err := callTool(t, c, "env", map[string]any{"name": "MCPX_SUPERVISOR"})
	if err != nil {
		t.Fatal(err)
	}
	if res := decodeResult(t, raw); !res.IsError {
		t.Errorf("MCPX_SUPERVISOR is set in the server: %s", raw)
	}
	got, err := filepath.EvalSymlinks(mustCallText(t, c, "cwd", nil))
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("cwd = %q, want %q", got, want)
	}
}

// TestRelativeCommandInCwd runs the fixture by a path relative to Cwd.
func TestRelativeCommandInCwd(t *testing.T) {
	t.Parallel()
	srv := stdioServer("relative")
	srv.Cwd = filepath.Dir(fixturePath)
	srv.Command = "./" + filepath.Base(fixturePath)
	connect(t, srv, nil)
}

func TestStderrIsLogged(t *testing.T) {
	t.Parallel()
	var buf testenv.Buffer
	opts := fastOptions()
	opts.Logger = slog.New(log.New(&buf))
	connect(t, stdioServer("talker", "--stderr", "hello from fixture"), opts)
	testenv.Eventually(t, 5*time.Second, func() bool {
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.Contains(line, "hello from fixture") && strings.Contains(line, "talker") {
				return true
			}
		}
		return false
	}, "no log line with the server name and its stderr in:\n%s", buf.String())
}

func TestRedact(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-value"
	var buf testenv.Buffer
	opts := fastOptions()
	opts.Logger = slog.New(log.New(&buf))
	opts.Redact = func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }

	// A live server logs the line; a dying one also quotes it in its error.
	live := connect(t, stdioServer("live", "--stderr", "token "+secret), opts)
	dead := startClient(t, stdioServer("dead", "--stderr", "token "+secret, "--exit-at-start", "2"), opts)

	testenv.Eventually(t, 5*time.Second, func() bool {
		return strings.Count(buf.String(), "token [REDACTED]") >= 2
	}, "the redacted stderr line was not logged for both servers:\n%s", buf.String())
	st := dead.Status()
	if st.State != upstream.StateFailed || !strings.Contains(st.Err, "token [REDACTED]") {
		t.Errorf("dead: state %s, Err %q; want failed quoting the redacted stderr", st.State, st.Err)
	}
	_, err := callTool(t, dead, "echo", map[string]any{"message": "x"})
	if err == nil {
		t.Fatal("request on a failed server succeeded")
	}
	live.Close()
	dead.Close()
	for what, s := range map[string]string{
		"log": buf.String(), "live status": live.Status().Err, "dead status": dead.Status().Err,
		"request error": err.Error(),
	} {
		if strings.Contains(s, secret) {
			t.Errorf("the secret reached the %s: %s", what, s)
		}
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	var buf testenv.Buffer
	opts := fastOptions()
	opts.Logger = slog.New(log.New(&buf))
	c := connect(t, stdioServer("sleepy"), opts)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Request(ctx, "tools/call", toolParams(t, "sleep", map[string]any{"ms": 10000}))
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a context error", err)
	}
	if elapsed > time.Second {
		t.Errorf("the cancelled call returned after %s, want about 100ms", elapsed)
	}

	// Cancel once the request has reached the server (it logs the start
	// of the sleep on stderr).
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(buf.String(), "sleep 10000ms: started") < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel2()
	}()
	_, err = c.Request(ctx2, "tools/call", toolParams(t, "sleep", map[string]any{"ms": 10000}))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}

	// The server heard of both cancellations (it logs them on stderr).
	testenv.Eventually(t, 5*time.Second, func() bool { return strings.Count(buf.String(), "cancelling request") == 2 },
		"the server did not log two cancellations:\n%s", buf.String())
	if !strings.Contains(buf.String(), "timed out") || !strings.Contains(buf.String(), "cancelled by the client") {
		t.Errorf("cancellation reasons missing from:\n%s", buf.String())
	}
	if got := mustCallText(t, c, "echo", map[string]any{"message": "awake"}); got != "awake" {
		t.Errorf("echo after cancel = %q", got)
	}
	if st := c.Status(); st.State != upstream.StateConnected {
		t.Errorf("state %s after cancelled calls, want connected", st.State)
	}
}

// TestConcurrentRequests checks that answers reach their own callers.
func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("busy"), nil)
	errs := make(chan error, 50)
	for i := range 50 {
		msg := strings.Repeat("m", i+1)
		params := toolParams(t, "echo", map[string]any{"message": msg})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			raw, err := c.Request(ctx, "tools/call", params)
			if err == nil {
				var res toolResult
				if err = json.Unmarshal(raw, &res); err == nil && (len(res.Content) == 0 || res.Content[0].Text != msg) {
					err = errors.New("answer for another call: " + truncate(raw))
				}
			}
			errs <- err
		}()
	}
	for range 50 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
