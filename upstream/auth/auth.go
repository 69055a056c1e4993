package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream/auth/oauth"
)

// ErrLoginRequired is what every [*LoginRequiredError] wraps: the server
// wants a login (or more scopes) that mcpx does not have.
var ErrLoginRequired = errors.New("login required")

// LoginRequiredError says which server needs a login and how to give it
// one. Its text never holds a token.
type LoginRequiredError struct {
	Server string
	// Scopes are the scopes the server asked for, when it named them.
	Scopes []string
	// Reason is why: "" for "no stored login", or e.g. "the refresh token
	// was refused".
	Reason string
	// StepUp says the login is valid but lacks Scopes (HTTP 403
	// insufficient_scope).
	StepUp bool
}

func (e *LoginRequiredError) Error() string {
	what := "needs a login"
	if e.StepUp {
		what = "needs more scopes (" + strings.Join(e.Scopes, " ") + ")"
	}
	s := fmt.Sprintf("server %s %s: run `mcpx auth login %s`", e.Server, what, e.Server)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

func (e *LoginRequiredError) Unwrap() error { return ErrLoginRequired }

// Options configure an [Authenticator]. Server, URL and Store are required.
type Options struct {
	// Server is the server's name in the config; URL its MCP endpoint.
	Server, URL string
	// Config is the server's auth settings; nil means the defaults.
	Config *config.Auth
	// Store keeps the tokens and the client registration.
	Store Store
	// HTTPClient sends the OAuth requests (discovery, registration,
	// token, revocation); nil means one with a 30s timeout. Its Transport
	// is also the base of [Authenticator.RoundTripper].
	HTTPClient *http.Client
	// RefreshBefore is how long before expiry a token is refreshed;
	// default 60s.
	RefreshBefore time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Authenticator holds one server's login: it adds the access token to
// requests, refreshes it before it expires and when the server answers
// 401, and runs the login flow. Its methods are safe for concurrent use.
type Authenticator struct {
	server, url string
	cfg         config.Auth
	store       Store
	key         string
	http        *http.Client
	before      time.Duration
	now         func() time.Time

	refreshMu sync.Mutex // one refresh at a time: refresh tokens are single-use

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a login is saved
	cached  *oauth.Token  // the last token seen fresh; nil: read the store
	// found is the last discovery, and found.from the resource metadata
	// URL it started from: a refresh reuses it rather than fetching the
	// metadata documents again (two to four requests before each
	// refresh). A refresh that fails other than by an OAuth error forgets
	// it, so the next one looks again.
	found *discovered
}

type discovered struct {
	from string
	d    *oauth.Discovery
}

// discover returns the authorization server of the resource whose
// metadata is at metadataURL ("" when the server's 401 named none), from
// the last discovery when it started there.
func (a *Authenticator) discover(ctx context.Context, metadataURL string) (*oauth.Discovery, error) {
	a.mu.Lock()
	f := a.found
	a.mu.Unlock()
	if f != nil && f.from == metadataURL {
		return f.d, nil
	}
	d, err := oauth.Discover(ctx, a.http, a.url, metadataURL)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.found = &discovered{from: metadataURL, d: d}
	a.mu.Unlock()
	return d, nil
}

// forgetDiscovery makes the next discover fetch the documents again.
func (a *Authenticator) forgetDiscovery() {
	a.mu.Lock()
	a.found = nil
	a.mu.Unlock()
}

// New returns the Authenticator of one server.
func New(opts *Options) (*Authenticator, error) {
	if opts == nil || opts.Server == "" || opts.URL == "" || opts.Store == nil {
		return nil, errors.New("auth: Server, URL and Store are required")
	}
	a := &Authenticator{
		server:  opts.Server,
		url:     opts.URL,
		store:   opts.Store,
		key:     Key(opts.Server, opts.URL),
		http:    opts.HTTPClient,
		before:  opts.RefreshBefore,
		now:     opts.Now,
		changed: make(chan struct{}),
	}
	if opts.Config != nil {
		a.cfg = *opts.Config
	}
	if a.http == nil {
		a.http = &http.Client{Timeout: 30 * time.Second}
	}
	if a.before <= 0 {
		a.before = 60 * time.Second
	}
	if a.now == nil {
		a.now = time.Now
	}
	return a, nil
}

// Server is the server's name.
func (a *Authenticator) Server() string { return a.server }

// Changed is closed when a login for the server is saved by this process.
// Take it again after it fires.
func (a *Authenticator) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed
}

func (a *Authenticator) announce() {
	a.mu.Lock()
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
}

// record loads the server's record; nil (and no error) when there is none
// or it belongs to another URL.
func (a *Authenticator) record(ctx context.Context) (*Record, error) {
	r, err := a.store.Load(ctx, a.key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if r.URL != a.url {
		return nil, nil
	}
	return r, nil
}

func (a *Authenticator) save(ctx context.Context, r *Record) error {
	r.Server, r.URL, r.Saved = a.server, a.url, a.now()
	if err := a.store.Save(ctx, a.key, r); err != nil {
		return fmt.Errorf("save the login of %s: %w", a.server, err)
	}
	return nil
}

// fresh reports whether t can be sent without refreshing first.
func (a *Authenticator) fresh(t *oauth.Token) bool {
	return t != nil && t.AccessToken != "" && (t.ExpiresAt.IsZero() || a.now().Add(a.before).Before(t.ExpiresAt))
}

// Token returns an access token to send, refreshing the stored one when it
// expires within RefreshBefore. With no stored login it returns nil and no
// error: the request goes out bare and the server says whether it needs
// one.
//
// A fresh token is kept in memory, so that a request does not cost a store
// read (a D-Bus round trip with the Secret Service); the store is read
// again when it nears expiry or the server refuses it. No token is never
// cached: a login saved by another process is seen on the next request.
func (a *Authenticator) Token(ctx context.Context) (*oauth.Token, error) {
	a.mu.Lock()
	t := a.cached
	a.mu.Unlock()
	if a.fresh(t) {
		return t, nil
	}
	r, err := a.record(ctx)
	if err != nil || r == nil || r.Token == nil {
		a.cache(nil)
		return nil, err
	}
	if a.fresh(r.Token) {
		a.cache(r.Token)
		return r.Token, nil
	}
	return a.refresh(ctx, r.Token.AccessToken)
}

func (a *Authenticator) cache(t *oauth.Token) {
	a.mu.Lock()
	a.cached = t
	a.mu.Unlock()
}

// union returns the scopes of every list, each once, in order.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
