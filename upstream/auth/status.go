package auth

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// State is a server's login state as `mcpx auth status` shows it.
type State string

// The login states.
const (
	StateLoggedIn    State = "logged in"
	StateNeedsLogin  State = "needs login"
	StateNotRequired State = "not required"
)

// Status is one server's login, without any token.
type Status struct {
	State State
	// ExpiresAt is when the access token expires (zero: not said). A
	// refresh token, when there is one, renews it without a login.
	ExpiresAt   time.Time
	Refreshable bool
	Scopes      []string
	Account     string
	// Issuer is the authorization server that issued the login, when
	// mcpx recorded it.
	Issuer string
	// Why says why a login is needed or not required, in a few words.
	Why string
}

// Status reports the server's login. With no stored token, probe asks the
// server (without credentials) whether it needs one; without probe such a
// server is reported as needing a login.
func (a *Authenticator) Status(ctx context.Context, probe bool) (Status, error) {
	r, err := a.record(ctx)
	if err != nil {
		return Status{}, err
	}
	if r != nil && r.Token != nil {
		st := Status{State: StateLoggedIn, ExpiresAt: r.Token.ExpiresAt, Refreshable: r.Token.RefreshToken != "",
			Scopes: r.Scopes, Account: r.Account, Issuer: r.Issuer}
		if r.Token.Scope != "" {
			st.Scopes = strings.Fields(r.Token.Scope)
		}
		if !st.Refreshable && !st.ExpiresAt.IsZero() && a.now().After(st.ExpiresAt) {
			return Status{State: StateNeedsLogin, Why: "the token expired"}, nil
		}
		return st, nil
	}
	if !probe {
		return Status{State: StateNeedsLogin}, nil
	}
	needs, _, err := a.Probe(ctx)
	if err != nil {
		return Status{}, err
	}
	if needs {
		return Status{State: StateNeedsLogin, Why: "the server answers 401"}, nil
	}
	return Status{State: StateNotRequired, Why: "the server answers without a login"}, nil
}

// LogoutResult says what a logout did.
type LogoutResult struct {
	// Deleted says stored tokens were deleted; false when there were none.
	Deleted bool
	// Revoked says the authorization server revoked them (RFC 7009).
	Revoked bool
	// RevokeErr is why they could not be revoked; the local tokens are
	// deleted all the same. Nil when revoked or when the server offers no
	// revocation.
	RevokeErr error
}

// Logout revokes the server's tokens where its authorization server offers
// revocation, then deletes them and the client registration.
func (a *Authenticator) Logout(ctx context.Context) (LogoutResult, error) {
	r, err := a.record(ctx)
	if err != nil {
		return LogoutResult{}, err
	}
	if r == nil {
		// A record for an older URL of this server goes too.
		return LogoutResult{}, a.store.Delete(ctx, a.key)
	}
	var res LogoutResult
	if r.Token != nil {
		res.Revoked, res.RevokeErr = a.revoke(ctx, r)
	}
	a.cache(nil)
	if err := a.store.Delete(ctx, a.key); err != nil {
		return res, fmt.Errorf("delete the login of %s: %w", a.server, err)
	}
	res.Deleted = r.Token != nil
	return res, nil
}

func (a *Authenticator) revoke(ctx context.Context, r *Record) (bool, error) {
	c, err := a.oauthConfig(ctx, r)
	if err != nil {
		return false, err
	}
	if c.Metadata.RevocationEndpoint == "" {
		return false, nil
	}
	// The refresh token first: revoking it also ends the access tokens
	// issued from it on most servers (RFC 7009 §2.1).
	for _, t := range []struct{ token, hint string }{
		{r.Token.RefreshToken, "refresh_token"},
		{r.Token.AccessToken, "access_token"},
	} {
		if t.token == "" {
			continue
		}
		if err := c.Revoke(ctx, t.token, t.hint); err != nil {
			return false, err
		}
	}
	return true, nil
}
