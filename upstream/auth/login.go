package auth

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/upstream/auth/oauth"
)

// ErrNotRequired is returned by [Authenticator.StartLogin] for a server
// that answers without asking for a login.
var ErrNotRequired = errors.New("the server does not ask for a login")

// ErrStateMismatch is returned when the browser comes back with a state
// that is not the one sent: the response is refused (RFC 6749 §10.12).
var ErrStateMismatch = errors.New("the authorization response's state does not match the request's: refused")

// LoginResult is what a login got.
type LoginResult struct {
	// Account is who logged in, when the authorization server said.
	Account string
	// Scopes are the scopes granted (or asked for, when the server did not
	// say).
	Scopes []string
	// ExpiresAt is when the access token expires; zero when it does not say.
	ExpiresAt time.Time
	// Where is where the tokens are stored.
	Where string
}

// Flow is a login in progress: its authorization URL is for the user's
// browser, and Wait returns once the browser came back to the loopback
// redirect listener.
type Flow struct {
	// URL is the authorization URL to open.
	URL string
	// RedirectURI is the loopback listener's callback.
	RedirectURI string

	a      *Authenticator
	srv    *http.Server
	done   chan struct{}
	res    *LoginResult
	err    error
	finish sync.Once
}

// StartLogin discovers the server's authorization server (from its 401,
// RFC 9728 then RFC 8414 or OpenID discovery), picks the client mcpx logs
// in as (see chooseClient: a configured client ID, a client ID metadata
// document, or dynamic registration, RFC 7591, kept per issuer), starts
// the loopback redirect listener and returns the authorization URL,
// carrying PKCE S256, state and the resource indicator (RFC 8707). The
// browser's answer is checked for state and issuer (RFC 9207) before its
// code is redeemed. Close the Flow, or Wait on it.
func (a *Authenticator) StartLogin(ctx context.Context) (*Flow, error) {
	ch, err := a.probe(ctx)
	if err != nil {
		return nil, err
	}
	r, err := a.record(ctx)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = &Record{}
	}
	ln, err := a.listen(r)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			ln.Close()
		}
	}()
	redirect := "http://" + ln.Addr().String() + "/callback"
	scopes := union(a.cfg.Scopes, ch.Scopes, r.Scopes)

	if !sameOrigin(ch.ResourceMetadata, a.url) {
		// RFC 9728 §3.2: a server's metadata is its own; a challenge that
		// points elsewhere is ignored rather than followed.
		ch.ResourceMetadata = ""
	}
	if ch.ResourceMetadata != "" && ch.ResourceMetadata != r.ResourceMetadataURL {
		r.ResourceMetadataURL = ch.ResourceMetadata
	}
	hr := *r
	hr.Token = nil // a login starts over; the old token stays until it succeeds
	// A login looks again: the server may have moved.
	a.forgetDiscovery()
	d, err := a.discover(ctx, hr.ResourceMetadataURL)
	if err != nil {
		return nil, fmt.Errorf("discover the authorization server of %s: %w", a.server, err)
	}
	md := d.Metadata
	before := hr.Issuer
	if hr.Issuer != md.Issuer {
		// Client credentials are the issuer's that registered them (MCP
		// 2026-07-28): with a new authorization server mcpx registers
		// anew, and never shows it the old server's client. A record from
		// before mcpx kept issuers registers anew once, to be sure.
		hr.ClientID, hr.ClientSecret, hr.AuthMethod = "", "", ""
		hr.Issuer = md.Issuer
	}
	if len(a.cfg.Scopes) == 0 && len(ch.Scopes) == 0 {
		// MCP's scope selection: the challenge's scopes, else every one
		// the resource metadata lists.
		scopes = union(scopes, d.ScopesSupported)
	}
	scopes = withOfflineAccess(scopes, md)
	if len(md.CodeChallengeMethodsSupported) > 0 && !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("the authorization server of %s does not support PKCE S256, which MCP requires", a.server)
	}
	client, err := a.chooseClient(ctx, &hr, md, before, redirect, scopes)
	if err != nil {
		return nil, err
	}
	hr.Scopes = scopes

	oc := &oauth.Config{Metadata: md, Resource: d.Resource, Client: client, HTTPClient: a.http, Now: a.now}
	state, verifier := oauth.NewState(), oauth.NewVerifier()
	authURL, err := oc.AuthCodeURL(redirect, state, oauth.S256Challenge(verifier), scopes)
	if err != nil {
		return nil, fmt.Errorf("the authorization server of %s: %w", a.server, err)
	}

	f := &Flow{URL: authURL, RedirectURI: redirect, a: a, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			page(w, http.StatusBadRequest, "Login refused", "The response does not carry the state mcpx sent, so it may not come from your login. Nothing was stored.")
			f.end(nil, ErrStateMismatch)
			return
		}
		// RFC 9207: the response must come from the server asked, before
		// its code goes anywhere or its error is believed.
		if err := oauth.CheckIssuer(md, q.Get("iss"), q.Has("iss")); err != nil {
			page(w, http.StatusBadRequest, "Login refused", "The response does not come from the authorization server mcpx asked, so it may not be your login. Nothing was stored.")
			f.end(nil, err)
			return
		}
		switch {
		case q.Get("error") != "":
			msg := q.Get("error")
			if d := q.Get("error_description"); d != "" {
				msg += ": " + d
			}
			page(w, http.StatusBadRequest, "Login failed", "The authorization server said: "+msg)
			f.end(nil, fmt.Errorf("the authorization server refused the login to %s: %s", a.server, msg))
		case q.Get("code") == "":
			page(w, http.StatusBadRequest, "Login failed", "The response carries no authorization code.")
			f.end(nil, fmt.Errorf("the authorization response for %s carries no code", a.server))
		default:
			res, err := a.exchange(req.Context(), oc, &hr, redirect, q.Get("code"), verifier)
			if err != nil {
				page(w, http.StatusBadGateway, "Login failed", "mcpx could not get a token: see the terminal or the log.")
			} else {
				page(w, http.StatusOK, "Logged in", "mcpx is logged in to "+a.server+". You can close this tab.")
			}
			f.end(res, err)
		}
	})
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln)
	ok = true
	return f, nil
}

// exchange trades the code for tokens and saves them with the registration.
func (a *Authenticator) exchange(ctx context.Context, oc *oauth.Config, r *Record, redirect, code, verifier string) (*LoginResult, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	g, err := oc.Exchange(ctx, redirect, code, verifier)
	if err != nil {
		var oe *oauth.Error
		if errors.As(err, &oe) && oe.Code == "invalid_client" && a.cfg.ClientID == "" {
			// The authorization server forgot the registration mcpx kept:
			// the next login registers again.
			if ferr := a.ForgetRegistration(ctx); ferr == nil {
				err = fmt.Errorf("%w; mcpx dropped its registration, so logging in again registers anew", err)
			}
		}
		return nil, fmt.Errorf("exchange the authorization code of %s: %w", a.server, err)
	}
	r.Token = &g.Token
	if g.IDToken != "" {
		r.Account = accountOf(g.IDToken)
	}
	if err := a.save(ctx, r); err != nil {
		return nil, err
	}
	a.cache(r.Token)
	a.announce()
	res := &LoginResult{Account: r.Account, Scopes: r.Scopes, Where: a.store.Where(), ExpiresAt: r.Token.ExpiresAt}
	if r.Token.Scope != "" {
		res.Scopes = strings.Fields(r.Token.Scope)
	}
	return res, nil
}

// ForgetRegistration drops the client registration mcpx kept from dynamic
// registration, so that the next login registers again; the tokens stay
// until that login replaces them.
func (a *Authenticator) ForgetRegistration(ctx context.Context) error {
	r, err := a.record(ctx)
	if err != nil || r == nil {
		return err
	}
	r.ClientID, r.ClientSecret, r.AuthMethod, r.RedirectURI = "", "", "", ""
	return a.save(ctx, r)
}

// accountOf reads who logged in from an id_token's claims. The token is
// not verified: the name is only shown to the user who just logged in.
func accountOf(idToken string) string {
	parts := strings.Split(idToken, ".")
	if len(parts) < 2 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var c struct {
		Email    string `json:"email"`
		Username string `json:"preferred_username"`
		Sub      string `json:"sub"`
	}
	if json.Unmarshal(b, &c) != nil {
		return ""
	}
	for _, s := range []string{c.Email, c.Username, c.Sub} {
		if s != "" {
			return s
		}
	}
	return ""
}

// listen opens the loopback redirect listener: on auth.redirectPort when
// set, else on the port of the last registration when it is free (some
// servers insist on the registered URI), else on any free port.
func (a *Authenticator) listen(r *Record) (net.Listener, error) {
	if p := a.cfg.RedirectPort; p != 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return nil, fmt.Errorf("listen for the login redirect on port %d (servers.%s.auth.redirectPort): %w", p, a.server, err)
		}
		return ln, nil
	}
	if u, err := url.Parse(r.RedirectURI); err == nil && u.Port() != "" && a.cfg.ClientID == "" {
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", u.Port())); err == nil {
			return ln, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the login redirect: %w", err)
	}
	return ln, nil
}

// Wait waits for the browser to come back, for ctx to end, or for the
// timeout, and stops the listener.
func (f *Flow) Wait(ctx context.Context, timeout time.Duration) (*LoginResult, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-f.done:
	case <-ctx.Done():
		f.end(nil, ctx.Err())
	case <-t.C:
		f.end(nil, fmt.Errorf("no answer from the browser within %s", timeout))
	}
	f.Close()
	return f.res, f.err
}

func (f *Flow) end(res *LoginResult, err error) {
	f.finish.Do(func() {
		f.res, f.err = res, err
		close(f.done)
	})
}

// Done is closed when the flow ended, one way or the other.
func (f *Flow) Done() <-chan struct{} { return f.done }

// Close stops the listener; a flow not finished yet ends with an error.
func (f *Flow) Close() {
	f.end(nil, errors.New("login cancelled"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = f.srv.Shutdown(ctx)
}

func page(w http.ResponseWriter, status int, title, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>mcpx: %s</title><h1>%s</h1><p>%s</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(msg))
}
