package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

func reconnectOptions() *upstream.Options {
	o := fastOptions()
	o.Reconnect = true
	return o
}

// connectedAgain reports whether c has lost a connection and made a new
// one with its tools back, from one snapshot.
func connectedAgain(c *upstream.Client) bool {
	st := c.Status()
	return st.Restarts >= 1 && st.State == upstream.StateConnected && st.Tools > 0
}

func TestReconnectAfterCrash(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("crashy"), reconnectOptions())

	start := time.Now()
	_, err := callTool(t, c, "crash", nil)
	if err == nil {
		t.Fatal("crash answered; want an error as the server died without answering")
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the call on a dead server took %s to fail", elapsed)
	}
	t.Logf("crash: %v", err)
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error %q does not say how the server ended (exit status 3)", err)
	}

	testenv.Eventually(t, 5*time.Second, func() bool { return connectedAgain(c) },
		"not connected again: %+v", c.Status())
	if st := c.Status(); st.Attempts < 2 {
		t.Errorf("Attempts = %d after a restart, want >= 2", st.Attempts)
	}
	if len(c.Catalog().Tools) == 0 {
		t.Error("catalog empty after reconnect")
	}
	if got := mustCallText(t, c, "echo", map[string]any{"message": "back"}); got != "back" {
		t.Errorf("echo after reconnect = %q", got)
	}
}

func TestReconnectAfterDying(t *testing.T) {
	t.Parallel()
	// Connects, dies with exit status 4 after 300ms, again and again.
	c := startClient(t, stdioServer("mortal", "--die-after", "300ms"), reconnectOptions())
	testenv.Eventually(t, 5*time.Second, func() bool { return c.Status().Restarts >= 1 },
		"no restart: %+v", c.Status())
	testenv.Eventually(t, 5*time.Second, func() bool { return connectedAgain(c) },
		"not connected again: %+v", c.Status())
}

func TestNoReconnectWithoutOption(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("once"), nil)
	if _, err := callTool(t, c, "crash", nil); err == nil {
		t.Fatal("crash answered")
	}
	testenv.Eventually(t, 5*time.Second, func() bool {
		st := c.Status()
		return st.State == upstream.StateFailed && st.Restarts == 1
	}, "not failed after the crash: %+v", c.Status())
	st := c.Status()
	if !strings.Contains(st.Err, "exit status 3") {
		t.Errorf("Err %q does not say how the server ended", st.Err)
	}
	if len(c.Tools()) != 0 {
		t.Errorf("%d tools after the crash, want none", len(c.Tools()))
	}
	// Without Reconnect the Client stops for good after the loss; with
	// it, it would keep running to try again and Done would stay open.
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("the Client still runs 10s after the crash without Reconnect: %+v", c.Status())
	}
	if st := c.Status(); st.State != upstream.StateFailed || st.Attempts != 1 {
		t.Errorf("state %s after %d attempts; want failed after 1 without Reconnect", st.State, st.Attempts)
	}
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	var changes atomic.Int64
	opts := fastOptions()
	opts.OnChange = func(*upstream.Client) { changes.Add(1) }
	c := connect(t, stdioServer("growing"), opts)

	before := changes.Load()
	if got := mustCallText(t, c, "add-tool", map[string]any{"name": "newone"}); got != "added newone" {
		t.Fatalf("add-tool = %q", got)
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return hasTool(t, c, "newone") },
		"newone never appeared in %v", toolNames(t, c.Tools()))
	if changes.Load() == before {
		t.Error("OnChange was not called for the new catalog")
	}
	if n := c.Status().Tools; n != 11 {
		t.Errorf("Status.Tools = %d, want 11", n)
	}

	t.Run("burst", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 5 {
			name := fmt.Sprintf("burst-%d", i)
			params := toolParams(t, "add-tool", map[string]any{"name": name})
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := c.Request(ctx, "tools/call", params); err != nil {
					t.Errorf("add-tool %s: %v", name, err)
				}
			})
		}
		wg.Wait()
		testenv.Eventually(t, 5*time.Second, func() bool {
			for i := range 5 {
				if !hasTool(t, c, fmt.Sprintf("burst-%d", i)) {
					return false
				}
			}
			return true
		}, "not all five burst tools appeared: %v", toolNames(t, c.Tools()))
		if n := len(c.Tools()); n != 16 {
			t.Errorf("%d tools, want 16", n)
		}
	})
}

// TestReconnectRestoresSession: a server that restarts is asked again for
// the log level and the resource subscriptions its Client was asked for,
// and not for a subscription that was dropped.
func TestReconnectRestoresSession(t *testing.T) {
	t.Parallel()
	var buf testenv.Buffer
	opts := reconnectOptions()
	opts.Logger = slog.New(log.New(&buf))
	c := connect(t, stdioServer("restarting"), opts)
	ctx := context.Background()
	for _, r := range []struct{ method, params string }{
		{"logging/setLevel", `{"level":"debug"}`},
		{"resources/subscribe", `{"uri":"fx://kept"}`},
		{"resources/subscribe", `{"uri":"fx://dropped"}`},
		{"resources/unsubscribe", `{"uri":"fx://dropped"}`},
	} {
		if _, err := c.Request(ctx, r.method, json.RawMessage(r.params)); err != nil {
			t.Fatalf("%s: %v", r.method, err)
		}
	}
	count := func(s string) int { return strings.Count(buf.String(), s) }
	testenv.Eventually(t, 5*time.Second, func() bool { return count(`resources/unsubscribe {"uri":"fx://dropped"}`) == 1 },
		"the server did not log the requests:\n%s", buf.String())

	if _, err := callTool(t, c, "crash", nil); err == nil {
		t.Fatal("crash answered")
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return connectedAgain(c) }, "not connected again: %+v", c.Status())
	testenv.Eventually(t, 5*time.Second, func() bool {
		return count(`logging/setLevel {"level":"debug"}`) == 2 && count(`resources/subscribe {"uri":"fx://kept"}`) == 2
	}, "the new server was not asked again for the level and the subscription:\n%s", buf.String())
	if n := count(`resources/subscribe {"uri":"fx://dropped"}`); n != 1 {
		t.Errorf("a dropped subscription was asked for %d times, want once:\n%s", n, buf.String())
	}
}
