package upstream_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
	"github.com/mcpx/mcpx/upstream/auth"
	"github.com/mcpx/mcpx/upstream/auth/authtest"
)

// TestOAuthServerLifecycle follows a server behind OAuth through a
// session: needs login, logged in (tools appear without a restart),
// a token the server stops honouring refreshed unnoticed, and a revoked
// refresh token leading back to needs login.
func TestOAuthServerLifecycle(t *testing.T) {
	srv := authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	var logs testenv.Buffer
	opts := fastOptions()
	opts.Tokens = store
	opts.Reconnect = true
	opts.Heartbeat = -1
	// Only the login can wake the client: no backoff ends in the test.
	opts.MinBackoff, opts.MaxBackoff = time.Hour, time.Hour
	opts.Logger = slog.New(log.NewWithOptions(&logs, log.Options{Level: log.DebugLevel}))
	cfg := config.Server{Name: "remote", Transport: config.TransportHTTP, URL: srv.URL, Enabled: true, Timeout: 10 * time.Second}
	c := startClient(t, cfg, opts)

	st := c.Status()
	if st.State != upstream.StateNeedsLogin || !strings.Contains(st.Err, "mcpx auth login remote") {
		t.Fatalf("before login: state %q, err %q; want needs login naming the command", st.State, st.Err)
	}
	if n := len(c.Catalog().Tools); n != 0 {
		t.Fatalf("tools listed before login: %d", n)
	}
	if _, err := callTool(t, c, "whoami", nil); err == nil || !strings.Contains(err.Error(), "mcpx auth login remote") {
		t.Fatalf("call before login: %v, want an error naming `mcpx auth login remote`", err)
	}

	flow, err := c.Auth().StartLogin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	authtest.Browse(t, flow.URL)
	if _, err := flow.Wait(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() bool { return c.Status().State == upstream.StateConnected },
		"state %q after login, want connected", c.Status().State)
	var tokens []string
	keep := func() {
		r, err := store.Load(context.Background(), auth.Key("remote", srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, r.Token.AccessToken, r.Token.RefreshToken)
	}
	keep()
	if n := len(c.Catalog().Tools); n != 3 {
		t.Fatalf("tools after login = %d, want 3", n)
	}
	res, err := callTool(t, c, "echo", map[string]any{"message": "hi"})
	if err != nil || !strings.Contains(string(res), `"hi"`) {
		t.Fatalf("echo = %s, %v", res, err)
	}

	// Mid-session the server stops honouring the access token: the call
	// still succeeds, on a refreshed token.
	srv.Expire(t)
	res, err = callTool(t, c, "echo", map[string]any{"message": "again"})
	if err != nil || !strings.Contains(string(res), `"again"`) {
		t.Fatalf("echo after expiry = %s, %v", res, err)
	}
	if n := srv.Log(t).Refreshes; n < 1 {
		t.Fatalf("refreshes = %d, want the 401 to have refreshed", n)
	}
	keep()
	if c.Status().State != upstream.StateConnected {
		t.Fatalf("state after a refresh = %q", c.Status().State)
	}

	// Everything revoked: the call fails naming the login command and the
	// server goes back to needs login.
	srv.Revoke(t)
	if _, err := callTool(t, c, "echo", map[string]any{"message": "x"}); err == nil || !strings.Contains(err.Error(), "mcpx auth login remote") {
		t.Fatalf("call after revocation: %v, want an error naming `mcpx auth login remote`", err)
	}
	testenv.Eventually(t, 20*time.Second, func() bool { return c.Status().State == upstream.StateNeedsLogin },
		"state %q after revocation, want needs login", c.Status().State)

	// No token reached the log or the status.
	st2, _ := json.Marshal(c.Status())
	for _, tok := range tokens {
		for _, s := range []string{logs.String(), string(st2)} {
			if tok == "" || strings.Contains(s, tok) {
				t.Fatalf("a token reached the log or the status (or is empty): %q", tok)
			}
		}
	}
}

// TestOAuthSSE: the same over the older HTTP+SSE transport, whose stream
// is a GET.
func TestOAuthSSE(t *testing.T) {
	srv := authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	opts := fastOptions()
	opts.Tokens = store
	opts.Reconnect = true
	opts.Heartbeat = -1
	opts.MinBackoff, opts.MaxBackoff = time.Hour, time.Hour
	cfg := config.Server{Name: "legacy", Transport: config.TransportSSE, URL: srv.Base + "/sse", Enabled: true, Timeout: 10 * time.Second}
	c := startClient(t, cfg, opts)
	if st := c.Status(); st.State != upstream.StateNeedsLogin || !strings.Contains(st.Err, "mcpx auth login legacy") {
		t.Fatalf("before login: %q %q", st.State, st.Err)
	}
	flow, err := c.Auth().StartLogin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	authtest.Browse(t, flow.URL)
	if _, err := flow.Wait(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() bool { return c.Status().State == upstream.StateConnected },
		"state %q after login, want connected", c.Status().State)
	res, err := callTool(t, c, "echo", map[string]any{"message": "over sse"})
	if err != nil || !strings.Contains(string(res), "over sse") {
		t.Fatalf("echo = %s, %v", res, err)
	}
	if az := srv.Log(t).Authorize; len(az) != 1 || az[0]["resource"] != srv.Base+"/sse" {
		t.Errorf("authorize resource = %v, want the SSE endpoint", az)
	}
}

// TestNoOAuthWhenConfigSaysSo: with "auth": false, or a static
// Authorization header, a 401 is an ordinary failure, not a login to ask for.
func TestNoOAuthWhenConfigSaysSo(t *testing.T) {
	srv := authtest.Start(t)
	for _, tc := range []struct {
		name string
		cfg  config.Server
	}{
		{"auth false", config.Server{Auth: &config.Auth{Disabled: true}}},
		{"static header", config.Server{Headers: map[string]string{"Authorization": "Bearer static-token"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := fastOptions()
			opts.Tokens = &auth.FileStore{Dir: t.TempDir()}
			cfg := tc.cfg
			cfg.Name, cfg.Transport, cfg.URL, cfg.Enabled, cfg.Timeout = "remote", config.TransportHTTP, srv.URL, true, 10*time.Second
			c := startClient(t, cfg, opts)
			if st := c.Status(); st.State != upstream.StateFailed || c.Auth() != nil || strings.Contains(st.Err, "mcpx auth login") {
				t.Errorf("state %q, err %q, auth %v; want failed without a login", st.State, st.Err, c.Auth())
			}
		})
	}
}
