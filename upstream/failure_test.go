package upstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// failingServers are servers that cannot connect, each with the words its
// Status.Err must contain.
func failingServers() []struct {
	srv  config.Server
	want []string
} {
	notFound := stdioServer("notfound")
	notFound.Command = "mcpx-test-no-such-command"
	exits := stdioServer("exits", "--exit-at-start", "3")
	hangs := stdioServer("hangs", "--hang-init")
	hangs.Timeout = time.Second
	garbage := stdioServer("garbage", "--garbage")
	garbage.Timeout = time.Second
	return []struct {
		srv  config.Server
		want []string
	}{
		{notFound, []string{"mcpx-test-no-such-command", "not found"}},
		// The fixture's own stderr line tells why it exited.
		{exits, []string{"exit status 3", "exiting at start with code 3 as requested"}},
		{hangs, []string{"initialize", "no answer within 1s"}},
		// What the server wrote instead of JSON-RPC is quoted.
		{garbage, []string{"no answer within 1s", "non-JSON-RPC on stdout", "garbage: this is not JSON-RPC"}},
	}
}

func TestStartFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range failingServers() {
		t.Run(tc.srv.Name, func(t *testing.T) {
			t.Parallel()
			c := startClient(t, tc.srv, nil)
			st := c.Status()
			if st.State != upstream.StateFailed {
				t.Fatalf("state %s, want failed", st.State)
			}
			for _, w := range tc.want {
				if !strings.Contains(st.Err, w) {
					t.Errorf("Err %q does not contain %q", st.Err, w)
				}
			}
			if len(c.Tools()) != 0 {
				t.Errorf("a failed server has %d tools", len(c.Tools()))
			}
		})
	}
	t.Run("noise between messages", func(t *testing.T) {
		t.Parallel()
		c := connect(t, stdioServer("noisy", "--noise"), nil)
		if n := len(c.Tools()); n != 10 {
			t.Errorf("%d tools, want 10", n)
		}
		if got := mustCallText(t, c, "echo", map[string]any{"message": "through noise"}); got != "through noise" {
			t.Errorf("echo = %q", got)
		}
	})
}

// TestIsolation starts a good server among failing ones: it connects and
// answers as if it were alone.
func TestIsolation(t *testing.T) {
	t.Parallel()
	servers := []config.Server{stdioServer("good")}
	for _, tc := range failingServers() {
		servers = append(servers, tc.srv)
	}
	clients := upstream.StartAll(context.Background(), servers, fastOptions())
	t.Cleanup(func() { upstream.CloseAll(clients) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	upstream.WaitReady(ctx, clients)
	if ctx.Err() != nil {
		t.Fatal("WaitReady did not return within 20s")
	}

	for i, c := range clients {
		if c.Name() != servers[i].Name {
			t.Errorf("client %d is %q, want %q: StartAll must keep the order", i, c.Name(), servers[i].Name)
		}
		want := upstream.StateFailed
		if i == 0 {
			want = upstream.StateConnected
		}
		if st := c.Status(); st.State != want {
			t.Errorf("%s: state %s (%s), want %s", c.Name(), st.State, st.Err, want)
		}
	}
	if got := mustCallText(t, clients[0], "echo", map[string]any{"message": "alone"}); got != "alone" {
		t.Errorf("echo = %q", got)
	}
}

// TestCloseWhileConnecting closes a client whose server never answers
// initialize: Close must not wait for the connect timeout.
func TestCloseWhileConnecting(t *testing.T) {
	t.Parallel()
	srv := stdioServer("stuck", "--hang-init")
	srv.Timeout = 30 * time.Second
	c := upstream.New(srv, fastOptions())
	c.Start(context.Background())
	testenv.Eventually(t, 5*time.Second, func() bool { return c.Status().Attempts == 1 }, "no connect attempt")
	start := time.Now()
	c.Close()
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Close took %s while connecting", elapsed)
	}
	if st := c.Status(); st.State != upstream.StateStopped {
		t.Errorf("state %s after Close, want stopped", st.State)
	}
	select {
	case <-c.Ready():
	default:
		t.Error("Ready is not closed after Close")
	}
}
