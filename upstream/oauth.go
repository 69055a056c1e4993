package upstream

import (
	"errors"
	"net/http"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream/auth"
)

// StateNeedsLogin is a remote server that asked for an OAuth login mcpx
// does not have (or no longer has): `mcpx auth login NAME` gives it one,
// and the Client then connects without a restart.
const StateNeedsLogin State = "needs login"

// newAuthenticator returns the server's OAuth login, or nil when mcpx
// must not log in to it (stdio, "auth": false, a static Authorization
// header) or no token store was given.
func newAuthenticator(cfg config.Server, store auth.Store) *auth.Authenticator {
	if store == nil || !cfg.OAuth() {
		return nil
	}
	a, err := auth.New(&auth.Options{Server: cfg.Name, URL: cfg.URL, Config: cfg.Auth, Store: store})
	if err != nil {
		return nil
	}
	return a
}

// Auth is the server's OAuth login; nil when the server has none.
func (c *Client) Auth() *auth.Authenticator { return c.auth }

// authTransport puts the server's OAuth login, if it has one, in front of
// base: the token goes on each request, refreshed as needed.
func (c *Client) authTransport(base http.RoundTripper) http.RoundTripper {
	if c.auth == nil {
		return base
	}
	return c.auth.RoundTripper(base)
}

// authChanged fires when this process saved a new login for the server;
// nil (never) without OAuth.
func (c *Client) authChanged() <-chan struct{} {
	if c.auth == nil {
		return nil
	}
	return c.auth.Changed()
}

// needsLogin returns the login error in err's chain, if any.
func needsLogin(err error) (*auth.LoginRequiredError, bool) {
	var lr *auth.LoginRequiredError
	if errors.As(err, &lr) && !lr.StepUp {
		return lr, true
	}
	return nil, false
}
