package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx/mcpx/upstream/auth/oauth"
)

// refreshTimeout bounds a refresh, which goes on when its caller gives up.
const refreshTimeout = 30 * time.Second

// refresh exchanges the refresh token for new tokens, unless another
// caller already replaced stale (the access token it saw). A refused
// refresh token deletes the tokens: only a new login helps then.
//
// The refresh runs to its end even when ctx ends first: the server may
// already have rotated the refresh token, and tokens it issued but mcpx
// did not store would leave only a new login.
func (a *Authenticator) refresh(ctx context.Context, stale string) (*oauth.Token, error) {
	type result struct {
		t   *oauth.Token
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		t, err := a.refreshNow(ctx, stale)
		done <- result{t, err}
	}()
	select {
	case r := <-done:
		return r.t, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *Authenticator) refreshNow(ctx context.Context, stale string) (*oauth.Token, error) {
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	a.cache(nil)
	r, err := a.record(ctx)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Token == nil {
		return nil, &LoginRequiredError{Server: a.server}
	}
	if r.Token.AccessToken != stale && a.fresh(r.Token) {
		a.cache(r.Token)
		return r.Token, nil
	}
	if r.Token.RefreshToken == "" {
		return nil, &LoginRequiredError{Server: a.server, Reason: "the access token expired and there is no refresh token"}
	}
	c, err := a.oauthConfig(ctx, r)
	var lr *LoginRequiredError
	if errors.As(err, &lr) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("refresh the token of %s: %w", a.server, err)
	}
	g, err := c.Refresh(ctx, r.Token.RefreshToken)
	if err != nil {
		var oe *oauth.Error
		if errors.As(err, &oe) && (oe.Code == "invalid_grant" || oe.Code == "invalid_client" || oe.Code == "unauthorized_client") {
			// Another mcpx process may have used the refresh token first
			// (it rotates): its new tokens are in the store then.
			if now, lerr := a.record(ctx); lerr == nil && now != nil && now.Token != nil &&
				now.Token.RefreshToken != r.Token.RefreshToken && a.fresh(now.Token) {
				a.cache(now.Token)
				return now.Token, nil
			}
			r.Token = nil
			if serr := a.save(ctx, r); serr != nil {
				return nil, serr
			}
			return nil, &LoginRequiredError{Server: a.server, Reason: "the authorization server refused the refresh token: " + oe.Code}
		}
		// Not an answer from a token endpoint: it may have moved.
		a.forgetDiscovery()
		return nil, fmt.Errorf("refresh the token of %s: %w", a.server, err)
	}
	r.Token = &g.Token
	r.Issuer = c.Metadata.Issuer // a record saved before mcpx kept issuers gets one
	if err := a.save(ctx, r); err != nil {
		return nil, err
	}
	a.cache(r.Token)
	return r.Token, nil
}

// oauthConfig finds the authorization server of the login in r (from the
// resource metadata URL its login found; see discover) and returns the
// OAuth client for it, with the config's client ID or r's registration.
// When the resource names another authorization server than the one that
// issued r's tokens, it returns a [*LoginRequiredError]: neither the
// tokens nor the registration may go to the new one (MCP 2026-07-28).
func (a *Authenticator) oauthConfig(ctx context.Context, r *Record) (*oauth.Config, error) {
	d, err := a.discover(ctx, r.ResourceMetadataURL)
	if err != nil {
		return nil, fmt.Errorf("discover the authorization server: %w", err)
	}
	if r.Issuer != "" && d.Metadata.Issuer != r.Issuer {
		return nil, &LoginRequiredError{Server: a.server, Reason: fmt.Sprintf("its authorization server is now %s, not %s, which issued the login", d.Metadata.Issuer, r.Issuer)}
	}
	return &oauth.Config{Metadata: d.Metadata, Resource: d.Resource, Client: a.client(r), HTTPClient: a.http, Now: a.now}, nil
}
