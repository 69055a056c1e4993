package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// tokenEndpoint records the token requests it gets and answers each with
// answer.
type tokenEndpoint struct {
	mu       sync.Mutex
	forms    []url.Values
	basic    [][2]string // user and password of each request's Basic auth; empty without
	status   int
	response string
}

func (e *tokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	user, pass, _ := r.BasicAuth()
	e.mu.Lock()
	e.forms = append(e.forms, r.PostForm)
	e.basic = append(e.basic, [2]string{user, pass})
	status, response := e.status, e.response
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write([]byte(response))
}

func (e *tokenEndpoint) last() (url.Values, [2]string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.forms[len(e.forms)-1], e.basic[len(e.basic)-1]
}

var clock = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

func newConfig(t testing.TB, e *tokenEndpoint, client Client, authMethods ...string) *Config {
	s := newSite(t, func(u string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{"/token": e.ServeHTTP, "/revoke": e.ServeHTTP}
	})
	return &Config{
		Metadata: &Metadata{Issuer: s.URL, AuthorizationEndpoint: s.URL + "/authorize", TokenEndpoint: s.URL + "/token",
			RevocationEndpoint: s.URL + "/revoke", TokenEndpointAuthMethodsSupported: authMethods},
		Resource:   "https://mcp.example/mcp",
		Client:     client,
		HTTPClient: s.Client(),
		Now:        func() time.Time { return clock },
	}
}

const grant = `{"access_token":"at-2","token_type":"Bearer","refresh_token":"rt-2","expires_in":3600,"scope":"a b","id_token":"x.y.z"}`

func TestExchangeAndRefreshForms(t *testing.T) {
	e := &tokenEndpoint{response: grant}
	c := newConfig(t, e, Client{ID: "cid"})
	ctx := context.Background()

	g, err := c.Exchange(ctx, "http://127.0.0.1:5000/callback", "the-code", "the-verifier")
	if err != nil {
		t.Fatal(err)
	}
	want := Token{AccessToken: "at-2", TokenType: "Bearer", RefreshToken: "rt-2", Scope: "a b", ExpiresAt: clock.Add(time.Hour)}
	if g.Token != want || g.IDToken != "x.y.z" {
		t.Errorf("grant = %+v, want %+v with the id_token", g, want)
	}
	form, basic := e.last()
	if form.Encode() != (url.Values{
		"grant_type": {"authorization_code"}, "code": {"the-code"}, "code_verifier": {"the-verifier"},
		"redirect_uri": {"http://127.0.0.1:5000/callback"}, "resource": {"https://mcp.example/mcp"}, "client_id": {"cid"},
	}).Encode() || basic != [2]string{} {
		t.Errorf("exchange sent %v (basic %q)", form, basic)
	}

	// A refresh answered without a new refresh token keeps the old one.
	e.response = `{"access_token":"at-3","token_type":"bearer","expires_in":"60"}`
	g, err = c.Refresh(ctx, "rt-2")
	if err != nil {
		t.Fatal(err)
	}
	if g.AccessToken != "at-3" || g.RefreshToken != "rt-2" || !g.ExpiresAt.Equal(clock.Add(time.Minute)) {
		t.Errorf("refreshed = %+v", g.Token)
	}
	form, _ = e.last()
	if form.Encode() != (url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {"rt-2"}, "resource": {"https://mcp.example/mcp"}, "client_id": {"cid"},
	}).Encode() {
		t.Errorf("refresh sent %v", form)
	}
}

// TestClientAuthentication: client_secret_basic sends the credentials in
// the Authorization header, form-encoded; client_secret_post in the
// form; none only the client ID.
func TestClientAuthentication(t *testing.T) {
	for _, tc := range []struct {
		name        string
		client      Client
		authMethods []string // the metadata's token_endpoint_auth_methods_supported
		basic       [2]string
		form        url.Values // the client's part of the form
	}{{
		name:   "public client",
		client: Client{ID: "cid"},
		form:   url.Values{"client_id": {"cid"}},
	}, {
		name:   "registered for client_secret_basic",
		client: Client{ID: "c id:1", Secret: "s&e:cret", AuthMethod: AuthBasic},
		basic:  [2]string{"c+id%3A1", "s%26e%3Acret"}, // RFC 6749 §2.3.1
		form:   url.Values{},
	}, {
		name:        "registered for client_secret_post",
		client:      Client{ID: "cid", Secret: "sec", AuthMethod: AuthPost},
		authMethods: []string{AuthBasic},
		form:        url.Values{"client_id": {"cid"}, "client_secret": {"sec"}},
	}, {
		name:        "no method given, the server takes only Basic",
		client:      Client{ID: "cid", Secret: "sec"},
		authMethods: []string{AuthBasic, "private_key_jwt"},
		basic:       [2]string{"cid", "sec"},
		form:        url.Values{},
	}, {
		name:        "no method given, the server takes both",
		client:      Client{ID: "cid", Secret: "sec"},
		authMethods: []string{AuthBasic, AuthPost},
		form:        url.Values{"client_id": {"cid"}, "client_secret": {"sec"}},
	}, {
		name:   "no method given, the server does not say",
		client: Client{ID: "cid", Secret: "sec"},
		form:   url.Values{"client_id": {"cid"}, "client_secret": {"sec"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := &tokenEndpoint{response: grant}
			c := newConfig(t, e, tc.client, tc.authMethods...)
			if _, err := c.Refresh(context.Background(), "rt"); err != nil {
				t.Fatal(err)
			}
			form, basic := e.last()
			for _, k := range []string{"grant_type", "refresh_token", "resource"} {
				form.Del(k)
			}
			if form.Encode() != tc.form.Encode() || basic != tc.basic {
				t.Errorf("sent form %v and Basic %q; want %v and %q", form, basic, tc.form, tc.basic)
			}
			// Revocation authenticates the same way (RFC 7009 §2.1).
			if err := c.Revoke(context.Background(), "rt", "refresh_token"); err != nil {
				t.Fatal(err)
			}
			form, basic = e.last()
			form.Del("token")
			form.Del("token_type_hint")
			if form.Encode() != tc.form.Encode() || basic != tc.basic {
				t.Errorf("revocation sent form %v and Basic %q; want %v and %q", form, basic, tc.form, tc.basic)
			}
		})
	}
}

// TestTokenEndpointErrors: error responses become an *Error carrying the
// code and description; other failures say what happened; no error text
// holds what the request carried.
func TestTokenEndpointErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		response string
		code     string // the *Error's; "" for another error
		want     string // in the text
	}{
		{"invalid_grant", 400, `{"error":"invalid_grant","error_description":"refresh token is invalid or revoked"}`, "invalid_grant",
			"the authorization server answered invalid_grant: refresh token is invalid or revoked"},
		{"invalid_client on 401", 401, `{"error":"invalid_client"}`, "invalid_client", "answered invalid_client"},
		{"an error in a 200, as GitHub sends", 200, `{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired."}`,
			"bad_verification_code", "incorrect or expired"},
		{"a description with control characters", 400, "{\"error\":\"invalid_request\",\"error_description\":\"a\\u001b[31mb\\nc\"}", "invalid_request",
			"answered invalid_request: a[31mbc"},
		{"a description quoting what was sent", 400, `{"error":"invalid_grant","error_description":"code the-code with verifier the-verifier for s3cr3t"}`, "invalid_grant",
			"code [redacted] with verifier [redacted] for [redacted]"},
		{"not an OAuth error", 502, `<html>rt-secret the-code s3cr3t</html>`, "", "the server answered 502 Bad Gateway"},
		{"an error code that is not a string", 400, `{"error":42}`, "", "the server answered 400 Bad Request"},
		{"a redirect is not followed", 307, ``, "", "the server answered 307 Temporary Redirect"},
		{"no access token", 200, `{"token_type":"Bearer"}`, "", "has no access_token"},
		{"not JSON", 200, `access_token=x`, "", "is not a token response"},
		{"a bad expires_in", 200, `{"access_token":"x","expires_in":"soon"}`, "", `expires_in "soon" is not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &tokenEndpoint{status: tc.status, response: tc.response}
			c := newConfig(t, e, Client{ID: "cid", Secret: "s3cr3t"})
			_, err := c.Exchange(context.Background(), "http://127.0.0.1/callback", "the-code", "the-verifier")
			if err == nil {
				t.Fatal("no error")
			}
			var oe *Error
			if got := errors.As(err, &oe); got != (tc.code != "") || (got && (oe.Code != tc.code || oe.Status != tc.status)) {
				t.Errorf("err = %#v, want an *Error %q with status %d: %v", err, tc.code, tc.status, got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to say %q", err, tc.want)
			}
			for _, secret := range []string{"the-code", "the-verifier", "s3cr3t", "rt-secret"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("err = %q holds %q", err, secret)
				}
			}
		})
	}
}

// TestTokenRequestFollowsNoRedirect: a token endpoint that redirects does
// not get the form sent on to the new location.
func TestTokenRequestFollowsNoRedirect(t *testing.T) {
	elsewhere := &tokenEndpoint{response: grant}
	other := newSite(t, func(string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{"/token": elsewhere.ServeHTTP}
	})
	e := &tokenEndpoint{}
	c := newConfig(t, e, Client{ID: "cid", Secret: "sec"})
	s := newSite(t, func(string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{"/token": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/token", http.StatusPermanentRedirect)
		}}
	})
	c.Metadata.TokenEndpoint = s.URL + "/token"
	if _, err := c.Refresh(context.Background(), "rt-secret"); err == nil {
		t.Fatal("a redirected refresh succeeded")
	}
	if len(other.paths()) != 0 {
		t.Errorf("the redirect was followed: %q", other.paths())
	}
}

func TestTokenResponseTooLarge(t *testing.T) {
	e := &tokenEndpoint{response: `{"access_token":"` + strings.Repeat("x", 1<<20) + `"}`}
	c := newConfig(t, e, Client{ID: "cid"})
	if _, err := c.Refresh(context.Background(), "rt"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}

func TestAuthCodeURL(t *testing.T) {
	c := &Config{
		Metadata: &Metadata{AuthorizationEndpoint: "https://as.example/authorize?tenant=t1"},
		Resource: "https://mcp.example/mcp",
		Client:   Client{ID: "cid", Secret: "never in a URL"},
	}
	raw, err := c.AuthCodeURL("http://127.0.0.1:5000/callback", "st", "ch", []string{"mcp:read", "mcp:admin"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"tenant": {"t1"}, "response_type": {"code"}, "client_id": {"cid"}, "redirect_uri": {"http://127.0.0.1:5000/callback"},
		"state": {"st"}, "code_challenge": {"ch"}, "code_challenge_method": {"S256"}, "scope": {"mcp:read mcp:admin"},
		"resource": {"https://mcp.example/mcp"},
	}
	if u.Host != "as.example" || u.Path != "/authorize" || u.Query().Encode() != want.Encode() {
		t.Errorf("URL = %s", u)
	}
}

// TestConfigWithoutMetadata: a Config missing what Discover gives is an
// error, not a panic.
func TestConfigWithoutMetadata(t *testing.T) {
	c := &Config{Client: Client{ID: "cid"}}
	ctx := context.Background()
	if _, err := c.AuthCodeURL("http://127.0.0.1/cb", "st", "ch", nil); err == nil {
		t.Error("AuthCodeURL without metadata")
	}
	if _, err := c.Refresh(ctx, "rt"); err == nil {
		t.Error("Refresh without metadata")
	}
	if err := c.Revoke(ctx, "rt", "refresh_token"); err == nil {
		t.Error("Revoke without metadata")
	}
	c.Metadata = &Metadata{AuthorizationEndpoint: "/authorize"}
	if _, err := c.AuthCodeURL("http://127.0.0.1/cb", "st", "ch", nil); err == nil {
		t.Error("AuthCodeURL with a relative endpoint")
	}
}

// TestRefusalQuotingTheTokenHidesIt: a server that quotes the refresh or
// revoked token in its error_description does not get it into mcpx's
// error text.
func TestRefusalQuotingTheTokenHidesIt(t *testing.T) {
	e := &tokenEndpoint{status: 400, response: `{"error":"invalid_grant","error_description":"rt-secret-1 is revoked"}`}
	c := newConfig(t, e, Client{ID: "cid"})
	_, err := c.Refresh(context.Background(), "rt-secret-1")
	if err == nil || strings.Contains(err.Error(), "rt-secret-1") || !strings.Contains(err.Error(), "[redacted] is revoked") {
		t.Errorf("refresh: %v", err)
	}
	e.response = `{"error":"invalid_request","error_description":"at-secret-2?"}`
	err = c.Revoke(context.Background(), "at-secret-2", "access_token")
	if err == nil || strings.Contains(err.Error(), "at-secret-2") {
		t.Errorf("revoke: %v", err)
	}
}
