package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream/auth"
	"github.com/mcpx/mcpx/upstream/auth/authtest"
)

func newAuth(t testing.TB, srv *authtest.Server, store auth.Store) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(&auth.Options{Server: "remote", URL: srv.URL, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func login(t testing.TB, a *auth.Authenticator) *auth.LoginResult {
	t.Helper()
	ctx := context.Background()
	flow, err := a.StartLogin(ctx)
	if err != nil {
		t.Fatalf("start login: %v", err)
	}
	if resp := authtest.Browse(t, flow.URL); resp.StatusCode != 200 {
		t.Fatalf("the callback answered %s", resp.Status)
	}
	res, err := flow.Wait(ctx, 30*time.Second)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	return res
}

// mcpCall sends one JSON-RPC request through the Authenticator's
// RoundTripper (initialize needs no session on this server).
func mcpCall(a *auth.Authenticator, srvURL string) (int, error) {
	c := &http.Client{Transport: a.RoundTripper(nil)}
	req, _ := http.NewRequest(http.MethodPost, srvURL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestLoginDiscoversRegistersAndSendsPKCEAndResource(t *testing.T) {
	srv := authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	a := newAuth(t, srv, store)

	// Before the login the server refuses, and says how to log in.
	_, err := mcpCall(a, srv.URL)
	var lr *auth.LoginRequiredError
	if !errors.As(err, &lr) || lr.Server != "remote" || !strings.Contains(err.Error(), "mcpx auth login remote") {
		t.Fatalf("before login: err = %v, want a LoginRequiredError naming `mcpx auth login remote`", err)
	}
	if strings.Join(lr.Scopes, " ") != "mcp:read" {
		t.Errorf("scopes from the 401 challenge = %q, want mcp:read", lr.Scopes)
	}

	res := login(t, a)
	if res.Account != "alice@example.test" {
		t.Errorf("account = %q, want alice@example.test (from the id_token)", res.Account)
	}
	if strings.Join(res.Scopes, " ") != "mcp:read" {
		t.Errorf("scopes = %q, want mcp:read (named by the server's challenge)", res.Scopes)
	}
	if res.ExpiresAt.IsZero() {
		t.Error("no expiry reported")
	}

	l := srv.Log(t)
	if len(l.Registrations) != 1 {
		t.Fatalf("registrations = %d, want 1 (dynamic client registration)", len(l.Registrations))
	}
	// MCP 2026-07-28 (SEP-837): a CLI with loopback redirects registers
	// as a native application, which OpenID servers check its redirect
	// URIs against.
	if got := l.RegistrationRequests[0]["application_type"]; got != "native" {
		t.Errorf("registration application_type = %v, want native", got)
	}
	if len(l.Authorize) != 1 {
		t.Fatalf("authorize requests = %d, want 1", len(l.Authorize))
	}
	az := l.Authorize[0]
	if az["code_challenge_method"] != "S256" || len(az["code_challenge"]) != 43 {
		t.Errorf("PKCE: method %q, challenge %d chars; want S256 and 43", az["code_challenge_method"], len(az["code_challenge"]))
	}
	if az["resource"] != srv.URL {
		t.Errorf("authorize resource = %q, want %q (RFC 8707)", az["resource"], srv.URL)
	}
	if az["state"] == "" || az["client_id"] != l.Registrations[0].ClientID {
		t.Errorf("authorize: state %q, client_id %q (registered %q)", az["state"], az["client_id"], l.Registrations[0].ClientID)
	}
	if u, _ := url.Parse(az["redirect_uri"]); u == nil || u.Hostname() != "127.0.0.1" || u.Path != "/callback" {
		t.Errorf("redirect_uri = %q, want http://127.0.0.1:PORT/callback", az["redirect_uri"])
	}
	if len(l.Token) != 1 || l.Token[0].GrantType != "authorization_code" || !l.Token[0].HasCodeVerifier || l.Token[0].Resource != srv.URL {
		t.Errorf("token requests = %+v, want one authorization_code with code_verifier and resource", l.Token)
	}

	// Now the same request goes through.
	if code, err := mcpCall(a, srv.URL); err != nil || code != 200 {
		t.Fatalf("after login: %d, %v", code, err)
	}
	st, err := a.Status(context.Background(), false)
	if err != nil || st.State != auth.StateLoggedIn {
		t.Fatalf("status = %+v, %v", st, err)
	}
}

func TestStateMismatchIsRefused(t *testing.T) {
	srv := authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	a := newAuth(t, srv, store)
	ctx := context.Background()
	flow, err := a.StartLogin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Get a real code from the server, but come back with another state.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(flow.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Query().Get("code") == "" {
		t.Fatalf("the server redirected to %q", resp.Header.Get("Location"))
	}
	q := back.Query()
	q.Set("state", "forged")
	back.RawQuery = q.Encode()
	if r := authtest.Browse(t, back.String()); r.StatusCode != http.StatusBadRequest {
		t.Errorf("callback with a forged state answered %s, want 400", r.Status)
	}
	if _, err := flow.Wait(ctx, 10*time.Second); !errors.Is(err, auth.ErrStateMismatch) {
		t.Fatalf("login err = %v, want ErrStateMismatch", err)
	}
	if l := srv.Log(t); len(l.Token) != 0 {
		t.Errorf("the code was exchanged despite the state mismatch: %+v", l.Token)
	}
	if st, _ := a.Status(ctx, false); st.State != auth.StateNeedsLogin {
		t.Errorf("state after a refused login = %q, want needs login", st.State)
	}
}

func TestRefreshBeforeExpiryAndOn401(t *testing.T) {
	srv := authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	a := newAuth(t, srv, store)
	login(t, a)
	ctx := context.Background()
	key := auth.Key("remote", srv.URL)
	first, err := store.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}

	// 1. The stored token is about to expire: it is refreshed before use
	// (by a new Authenticator, as in another mcpx process: this one keeps
	// the token it saw in memory).
	r := *first
	tok := *first.Token
	tok.ExpiresAt = time.Now().Add(10 * time.Second) // within RefreshBefore (60s)
	r.Token = &tok
	if err := store.Save(ctx, key, &r); err != nil {
		t.Fatal(err)
	}
	a = newAuth(t, srv, store)
	if code, err := mcpCall(a, srv.URL); err != nil || code != 200 {
		t.Fatalf("with an expiring token: %d, %v", code, err)
	}
	second, _ := store.Load(ctx, key)
	if n := srv.Log(t).Refreshes; n != 1 {
		t.Fatalf("refreshes = %d, want 1 before expiry", n)
	}
	if second.Token.AccessToken == first.Token.AccessToken || second.Token.RefreshToken == first.Token.RefreshToken {
		t.Error("the refresh did not store the new access token and the rotated refresh token")
	}

	// 2. The server stops honouring the access token: a 401 refreshes and
	// the request is sent again, unnoticed by the caller.
	srv.Expire(t)
	if code, err := mcpCall(a, srv.URL); err != nil || code != 200 {
		t.Fatalf("after the server expired the token: %d, %v", code, err)
	}
	if n := srv.Log(t).Refreshes; n != 2 {
		t.Fatalf("refreshes = %d, want 2 (one on the 401)", n)
	}
	for _, tr := range srv.Log(t).Token[1:] {
		if tr.GrantType != "refresh_token" || tr.Resource != srv.URL {
			t.Errorf("refresh request %+v, want grant refresh_token with resource", tr)
		}
	}

	// 3. Everything is revoked: the refresh token is refused, the tokens
	// are dropped, and the server needs a login again.
	srv.Revoke(t)
	_, err = mcpCall(a, srv.URL)
	if !errors.Is(err, auth.ErrLoginRequired) || !strings.Contains(err.Error(), "refused the refresh token") {
		t.Fatalf("after revocation: %v, want a login required because the refresh token was refused", err)
	}
	if st, _ := a.Status(ctx, false); st.State != auth.StateNeedsLogin {
		t.Errorf("state = %q, want needs login", st.State)
	}
}

func TestStepUpOn403InsufficientScope(t *testing.T) {
	srv := authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	a := newAuth(t, srv, store)
	login(t, a)
	c := &http.Client{Transport: a.RoundTripper(nil)}
	call := func() error {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"admin","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	err := call()
	var lr *auth.LoginRequiredError
	if !errors.As(err, &lr) || !lr.StepUp || !strings.Contains(err.Error(), "mcp:admin") {
		t.Fatalf("admin call: %v, want a step-up error naming mcp:admin", err)
	}
	// The next login asks for the old and the new scopes together.
	res := login(t, a)
	if got := strings.Join(res.Scopes, " "); got != "mcp:read mcp:admin" {
		t.Errorf("scopes after step-up = %q, want mcp:read mcp:admin", got)
	}
	if l := srv.Log(t); l.Authorize[len(l.Authorize)-1]["scope"] != "mcp:read mcp:admin" {
		t.Errorf("step-up authorize scope = %q", l.Authorize[len(l.Authorize)-1]["scope"])
	}
	if l := srv.Log(t); len(l.Registrations) != 1 {
		t.Errorf("registrations = %d, want the first one reused", len(l.Registrations))
	}
	// Dropping the kept registration (mcpx auth login --register) makes
	// the next login register anew.
	if err := a.ForgetRegistration(context.Background()); err != nil {
		t.Fatal(err)
	}
	login(t, a)
	if l := srv.Log(t); len(l.Registrations) != 2 || l.Authorize[len(l.Authorize)-1]["client_id"] != l.Registrations[1].ClientID {
		t.Errorf("after ForgetRegistration: %d registrations, last authorize by %q", len(l.Registrations), l.Authorize[len(l.Authorize)-1]["client_id"])
	}
}

func TestLogoutRevokesAndDeletes(t *testing.T) {
	srv := authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	a := newAuth(t, srv, store)
	login(t, a)
	ctx := context.Background()
	res, err := a.Logout(ctx)
	if err != nil || !res.Deleted || !res.Revoked || res.RevokeErr != nil {
		t.Fatalf("logout = %+v, %v", res, err)
	}
	if l := srv.Log(t); len(l.Revoke) != 2 || l.Revoke[0].TokenTypeHint != "refresh_token" {
		t.Errorf("revocations = %+v, want refresh then access token", l.Revoke)
	}
	if _, err := store.Load(ctx, auth.Key("remote", srv.URL)); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("after logout the record is still there: %v", err)
	}
	if st, _ := a.Status(ctx, true); st.State != auth.StateNeedsLogin {
		t.Errorf("status after logout = %q", st.State)
	}
}

// staleStore is a FileStore whose next Load returns an old record, as a
// second mcpx process that read the store just before the first one
// refreshed would see it.
type staleStore struct {
	*auth.FileStore
	stale *auth.Record
	n     int // how many more loads return stale
}

func (s *staleStore) Load(ctx context.Context, key string) (*auth.Record, error) {
	if s.n > 0 {
		s.n--
		r := *s.stale
		return &r, nil
	}
	return s.FileStore.Load(ctx, key)
}

// TestRefreshRaceBetweenProcesses: two processes refresh the same rotating
// refresh token; the loser finds the winner's tokens instead of wiping the
// login.
func TestRefreshRaceBetweenProcesses(t *testing.T) {
	srv := authtest.Start(t)
	files := &auth.FileStore{Dir: t.TempDir()}
	first := newAuth(t, srv, files)
	login(t, first)
	ctx := context.Background()
	key := auth.Key("remote", srv.URL)
	old, _ := files.Load(ctx, key)
	expired := *old
	tok := *old.Token
	tok.ExpiresAt = time.Now().Add(-time.Minute)
	expired.Token = &tok
	if err := files.Save(ctx, key, &expired); err != nil {
		t.Fatal(err)
	}
	// The first process refreshes: the refresh token rotates.
	first = newAuth(t, srv, files)
	if _, err := first.Token(ctx); err != nil {
		t.Fatal(err)
	}
	// The second read the store before that, so it sends the spent token.
	staleCopy := expired
	// (Two loads: the one that finds the token expired, and the one under
	// the refresh lock.)
	second := newAuth(t, srv, &staleStore{FileStore: files, stale: &staleCopy, n: 2})
	got, err := second.Token(ctx)
	if err != nil {
		t.Fatalf("the second process lost the login: %v", err)
	}
	now, _ := files.Load(ctx, key)
	if now.Token == nil || got.AccessToken != now.Token.AccessToken {
		t.Fatalf("the second process did not pick up the first one's tokens")
	}
	if l := srv.Log(t); l.Refreshes != 1 || len(l.Token) != 3 {
		t.Errorf("refreshes = %d of %d token requests, want 1 of 3 (the second refresh was sent and refused)", l.Refreshes, len(l.Token))
	}
}

// TestClientIDMetadataDocument: a clientId that is a URL is a client ID
// metadata document; where the authorization server accepts those, mcpx
// uses it without registering, and where it does not, says so.
func TestClientIDMetadataDocument(t *testing.T) {
	var doc *httptest.Server
	doc = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"client_id":                  doc.URL + "/mcpx.json",
			"client_name":                "mcpx",
			"redirect_uris":              []string{"http://127.0.0.1/callback"},
			"grant_types":                []string{"authorization_code", "refresh_token"},
			"response_types":             []string{"code"},
			"token_endpoint_auth_method": "none",
		})
	}))
	defer doc.Close()
	clientID := doc.URL + "/mcpx.json"
	newDocAuth := func(srv *authtest.Server) *auth.Authenticator {
		a, err := auth.New(&auth.Options{Server: "remote", URL: srv.URL, Store: &auth.FileStore{Dir: t.TempDir()},
			Config: &config.Auth{ClientID: clientID}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	srv := authtest.Start(t, "OAUTH_CIMD=1")
	login(t, newDocAuth(srv))
	l := srv.Log(t)
	if len(l.Registrations) != 0 || len(l.MetadataDocuments) != 1 || l.MetadataDocuments[0] != clientID {
		t.Errorf("registrations %d, documents fetched %v; want none and %s", len(l.Registrations), l.MetadataDocuments, clientID)
	}
	if l.Authorize[0]["client_id"] != clientID {
		t.Errorf("authorize client_id = %q", l.Authorize[0]["client_id"])
	}

	plain := authtest.Start(t)
	_, err := newDocAuth(plain).StartLogin(context.Background())
	if err == nil || !strings.Contains(err.Error(), "does not accept") {
		t.Errorf("with a server without metadata documents: %v", err)
	}

	// auth.clientMetadataUrl is the preferred way, not the only one: the
	// document where the server takes it, dynamic registration elsewhere.
	preferDoc := func(srv *authtest.Server) *auth.Authenticator {
		a, err := auth.New(&auth.Options{Server: "remote", URL: srv.URL, Store: &auth.FileStore{Dir: t.TempDir()},
			Config: &config.Auth{ClientMetadataURL: clientID}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	login(t, preferDoc(srv))
	if l := srv.Log(t); len(l.Registrations) != 0 || l.Authorize[1]["client_id"] != clientID {
		t.Errorf("clientMetadataUrl with a server that takes documents: %d registrations, authorize client_id %q", len(l.Registrations), l.Authorize[1]["client_id"])
	}
	login(t, preferDoc(plain))
	if l := plain.Log(t); len(l.Registrations) != 1 || l.Authorize[0]["client_id"] != l.Registrations[0].ClientID {
		t.Errorf("clientMetadataUrl with a server that does not: %d registrations, authorize client_id %q", len(l.Registrations), l.Authorize[0]["client_id"])
	}
}

// countingStore counts the records read.
type countingStore struct {
	*auth.FileStore
	loads atomic.Int64
}

func (s *countingStore) Load(ctx context.Context, key string) (*auth.Record, error) {
	s.loads.Add(1)
	return s.FileStore.Load(ctx, key)
}

// TestFreshTokenIsNotReadPerRequest: requests with a fresh token cost no
// store read (a keychain read is a D-Bus round trip).
func TestFreshTokenIsNotReadPerRequest(t *testing.T) {
	srv := authtest.Start(t)
	files := &auth.FileStore{Dir: t.TempDir()}
	login(t, newAuth(t, srv, files))
	store := &countingStore{FileStore: files}
	a := newAuth(t, srv, store)
	for i := range 5 {
		if code, err := mcpCall(a, srv.URL); err != nil || code != 200 {
			t.Fatalf("request %d: %d, %v", i, code, err)
		}
	}
	if n := store.loads.Load(); n != 1 {
		t.Errorf("store reads for 5 requests = %d, want 1", n)
	}
}

// TestLoginTimeout: nobody comes back from the browser; the wait ends with
// a message saying how long it waited, and the listener is gone.
func TestLoginTimeout(t *testing.T) {
	srv := authtest.Start(t)
	a := newAuth(t, srv, &auth.FileStore{Dir: t.TempDir()})
	flow, err := a.StartLogin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = flow.Wait(context.Background(), 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer from the browser within 50ms") {
		t.Fatalf("err = %v", err)
	}
	if _, err := http.Get(flow.RedirectURI); err == nil {
		t.Error("the redirect listener still answers after the login ended")
	}
}

// cancelOnRefresh is a transport that ends a context once the server has
// answered a refresh request, before its answer is read: the caller gives
// up after the server rotated the refresh token.
type cancelOnRefresh struct {
	cancel context.CancelFunc
	sent   atomic.Int64
}

func (c *cancelOnRefresh) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/token") {
		c.sent.Add(1)
		c.cancel()
	}
	return resp, err
}

// TestRefreshOutlivesItsCaller: a caller that gives up while its refresh
// is at the server does not lose the rotated tokens the server issued.
func TestRefreshOutlivesItsCaller(t *testing.T) {
	srv := authtest.Start(t)
	files := &auth.FileStore{Dir: t.TempDir()}
	login(t, newAuth(t, srv, files))
	ctx := context.Background()
	key := auth.Key("remote", srv.URL)
	r, _ := files.Load(ctx, key)
	tok := *r.Token
	tok.ExpiresAt = time.Now().Add(-time.Minute)
	r.Token = &tok
	if err := files.Save(ctx, key, r); err != nil {
		t.Fatal(err)
	}

	callCtx, cancel := context.WithCancel(ctx)
	tr := &cancelOnRefresh{cancel: cancel}
	a, err := auth.New(&auth.Options{Server: "remote", URL: srv.URL, Store: files, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Token(callCtx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned call: %v", err)
	}
	// The next caller waits for that refresh and gets its tokens.
	got, err := a.Token(ctx)
	if err != nil {
		t.Fatalf("after an abandoned refresh: %v", err)
	}
	if n := tr.sent.Load(); n != 1 {
		t.Errorf("refresh requests = %d, want 1", n)
	}
	now, _ := files.Load(ctx, key)
	if now.Token == nil || got.AccessToken != now.Token.AccessToken || now.Token.RefreshToken == tok.RefreshToken {
		t.Error("the rotated tokens were not stored")
	}
	if code, err := mcpCall(a, srv.URL); err != nil || code != 200 {
		t.Fatalf("with the refreshed token: %d, %v", code, err)
	}
}

// TestScopesFromResourceMetadata: a server whose 401 names no scope gets
// asked for every scope its resource metadata lists (MCP's scope
// selection); one that names some gets asked for those only.
func TestScopesFromResourceMetadata(t *testing.T) {
	for _, tc := range []struct {
		env, want string
	}{
		{"OAUTH_NO_SCOPE_HINT=1", "mcp:read mcp:admin"},
		{"OAUTH_NO_SCOPE_HINT=0", "mcp:read"},
	} {
		srv := authtest.Start(t, tc.env)
		res := login(t, newAuth(t, srv, &auth.FileStore{Dir: t.TempDir()}))
		l := srv.Log(t)
		if got := l.Authorize[0]["scope"]; got != tc.want {
			t.Errorf("%s: authorize scope = %q, want %q", tc.env, got, tc.want)
		}
		if got := strings.Join(res.Scopes, " "); got != tc.want {
			t.Errorf("%s: granted %q, want %q", tc.env, got, tc.want)
		}
	}
}

// wellKnownCounter counts the requests for metadata documents.
type wellKnownCounter struct{ n atomic.Int32 }

func (c *wellKnownCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/.well-known/") {
		c.n.Add(1)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestRefreshReusesDiscovery: the login discovers the authorization
// server; the refreshes after it use what it found instead of fetching
// the metadata documents again.
func TestRefreshReusesDiscovery(t *testing.T) {
	srv := authtest.Start(t)
	counter := &wellKnownCounter{}
	a, err := auth.New(&auth.Options{Server: "remote", URL: srv.URL, Store: &auth.FileStore{Dir: t.TempDir()},
		HTTPClient: &http.Client{Transport: counter, Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	login(t, a)
	if counter.n.Load() == 0 {
		t.Fatal("the login fetched no metadata document: the counter sees nothing")
	}
	afterLogin := counter.n.Load()
	for i := 1; i <= 2; i++ {
		srv.Expire(t)
		if code, err := mcpCall(a, srv.URL); err != nil || code != 200 {
			t.Fatalf("call %d after the token expired: %d, %v", i, code, err)
		}
	}
	if n := srv.Log(t).Refreshes; n != 2 {
		t.Fatalf("refreshes = %d, want 2", n)
	}
	if n := counter.n.Load() - afterLogin; n != 0 {
		t.Errorf("the refreshes fetched %d metadata documents, want 0", n)
	}
}
