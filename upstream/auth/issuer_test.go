package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream/auth"
	"github.com/mcpx/mcpx/upstream/auth/authtest"
	"github.com/mcpx/mcpx/upstream/auth/oauth"
)

// TestAuthorizationResponseIssuer: the iss parameter of the browser's
// answer is checked against the authorization server's issuer before the
// code is redeemed (RFC 9207, MCP 2026-07-28): a present iss must match
// exactly; a missing one is refused only where the server promised to
// send it.
func TestAuthorizationResponseIssuer(t *testing.T) {
	srv := authtest.Start(t)
	for _, tc := range []struct {
		name string
		set  authtest.Settings
		ok   bool
	}{
		{"advertised and sent", authtest.Settings{Iss: "correct", IssAdvertised: true}, true},
		{"neither advertised nor sent", authtest.Settings{}, true},
		{"sent, not advertised", authtest.Settings{Iss: "correct"}, true},
		{"advertised, missing", authtest.Settings{IssAdvertised: true}, false},
		{"another issuer", authtest.Settings{Iss: "wrong", IssAdvertised: true}, false},
		{"another issuer, not advertised", authtest.Settings{Iss: "wrong"}, false},
		{"only equal once normalized", authtest.Settings{Iss: "normalized", IssAdvertised: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Configure(t, tc.set)
			a := newAuth(t, srv, &auth.FileStore{Dir: t.TempDir()})
			ctx := context.Background()
			before := len(srv.Log(t).Token)
			flow, err := a.StartLogin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			resp := authtest.Browse(t, flow.URL)
			_, err = flow.Wait(ctx, 30*time.Second)
			if tc.ok {
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("login: %v (callback %s)", err, resp.Status)
				}
				return
			}
			if !errors.Is(err, oauth.ErrIssuerMismatch) || resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("login: %v (callback %s), want ErrIssuerMismatch and 400", err, resp.Status)
			}
			if !strings.Contains(err.Error(), srv.Base+"/") {
				t.Errorf("the error does not name the expected issuer: %v", err)
			}
			if l := srv.Log(t); len(l.Token) != before {
				t.Errorf("the code went to the token endpoint: %+v", l.Token[before:])
			}
			if st, _ := a.Status(ctx, false); st.State != auth.StateNeedsLogin {
				t.Errorf("state after a refused login = %q, want needs login", st.State)
			}
		})
	}
}

// TestIssuerMismatchHidesTheError: an error response from another issuer
// is not believed, nor shown (MCP 2026-07-28): what the user sees is the
// mismatch.
func TestIssuerMismatchHidesTheError(t *testing.T) {
	srv := authtest.Start(t)
	a := newAuth(t, srv, &auth.FileStore{Dir: t.TempDir()})
	ctx := context.Background()
	flow, err := a.StartLogin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(flow.URL)
	if err != nil {
		t.Fatal(err)
	}
	back := flow.RedirectURI + "?" + url.Values{
		"state":             {u.Query().Get("state")},
		"error":             {"access_denied"},
		"error_description": {"call 555-0100 to restore your account"},
		"iss":               {"https://evil.example.test/"},
	}.Encode()
	if r := authtest.Browse(t, back); r.StatusCode != http.StatusBadRequest {
		t.Errorf("callback answered %s, want 400", r.Status)
	}
	_, err = flow.Wait(ctx, 10*time.Second)
	if !errors.Is(err, oauth.ErrIssuerMismatch) || strings.Contains(err.Error(), "555-0100") || strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("login err = %v, want the mismatch and not the forged error", err)
	}
}

// TestOfflineAccess: mcpx asks for offline_access where the authorization
// server lists it (SEP-2207), and never where it does not.
func TestOfflineAccess(t *testing.T) {
	srv := authtest.Start(t)
	for _, listed := range []bool{true, false} {
		srv.Configure(t, authtest.Settings{OfflineAccess: listed})
		login(t, newAuth(t, srv, &auth.FileStore{Dir: t.TempDir()}))
		l := srv.Log(t)
		scope := strings.Fields(l.Authorize[len(l.Authorize)-1]["scope"])
		want := "mcp:read"
		if listed {
			want = "mcp:read offline_access"
		}
		if got := strings.Join(scope, " "); got != want {
			t.Errorf("offline_access listed %v: authorize scope %q, want %q", listed, got, want)
		}
	}
}

// TestAuthorizationServerMigration: when the resource names a new
// authorization server, mcpx neither refreshes nor presents the old
// server's client there; it says a login is needed, and the login
// registers with the new server (SEP-2352).
func TestAuthorizationServerMigration(t *testing.T) {
	oldAS, newAS := authtest.Start(t), authtest.Start(t)
	store := &auth.FileStore{Dir: t.TempDir()}
	a := newAuth(t, oldAS, store)
	login(t, a)
	oldClient := oldAS.Log(t).Registrations[0].ClientID
	oldAS.MigrateTo(t, newAS)

	// A process that starts now finds the new server at once: the old
	// login is not refreshed there.
	b := newAuth(t, oldAS, store)
	_, err := mcpCall(b, oldAS.URL)
	var lr *auth.LoginRequiredError
	if !errors.As(err, &lr) || !strings.Contains(lr.Reason, newAS.Base) || !strings.Contains(lr.Reason, oldAS.Base) {
		t.Fatalf("after the move: %v, want a LoginRequiredError naming both servers", err)
	}
	if l := newAS.Log(t); len(l.Token) != 0 {
		t.Errorf("the old login went to the new server's token endpoint: %+v", l.Token)
	}
	// The process that logged in, with the old server's discovery in
	// memory, ends up in the same place.
	if _, err := mcpCall(a, oldAS.URL); !errors.As(err, &lr) {
		t.Fatalf("the first process after the move: %v, want a LoginRequiredError", err)
	}

	login(t, b)
	l := newAS.Log(t)
	if len(l.Registrations) != 1 {
		t.Fatalf("registrations at the new server = %d, want 1", len(l.Registrations))
	}
	for _, az := range l.Authorize {
		if az["client_id"] == oldClient {
			t.Errorf("the old server's client %s was shown to the new one", oldClient)
		}
	}
	for _, tr := range l.Token {
		if tr.ClientID == oldClient {
			t.Errorf("the old server's client %s was shown to the new token endpoint", oldClient)
		}
	}
	if code, err := mcpCall(b, oldAS.URL); err != nil || code != 200 {
		t.Fatalf("after logging in with the new server: %d, %v", code, err)
	}
	if st, err := b.Status(context.Background(), false); err != nil || st.Issuer != newAS.Base+"/" {
		t.Errorf("status issuer = %q (%v), want %s/", st.Issuer, err, newAS.Base)
	}
	r, err := store.Load(context.Background(), auth.Key("remote", oldAS.URL))
	if err != nil || r.Issuer != newAS.Base+"/" || r.ClientID != l.Registrations[0].ClientID {
		t.Errorf("record: issuer %q client %q (%v), want %s/ and the new registration", r.Issuer, r.ClientID, err, newAS.Base)
	}
}

// TestPreRegisteredClientIssuer: a configured client ID bound to an
// issuer (auth.issuer) is presented to that authorization server only.
func TestPreRegisteredClientIssuer(t *testing.T) {
	srv := authtest.Start(t, "OAUTH_STATIC_CLIENT=pre-registered:pre-secret")
	withIssuer := func(issuer string) *auth.Authenticator {
		a, err := auth.New(&auth.Options{Server: "remote", URL: srv.URL, Store: &auth.FileStore{Dir: t.TempDir()},
			Config: &config.Auth{ClientID: "pre-registered", ClientSecret: "pre-secret", Issuer: issuer}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	login(t, withIssuer(srv.Base)) // the metadata says Base+"/"
	l := srv.Log(t)
	if len(l.Registrations) != 0 || l.Token[0].ClientID != "pre-registered" || !l.Token[0].HasClientSecret {
		t.Errorf("registrations %d, token request %+v; want none and the configured client", len(l.Registrations), l.Token[0])
	}

	_, err := withIssuer("https://as.example.test").StartLogin(context.Background())
	if err == nil || !strings.Contains(err.Error(), "https://as.example.test") || !strings.Contains(err.Error(), srv.Base+"/") {
		t.Fatalf("with another issuer configured: %v, want an error naming both", err)
	}
	if strings.Contains(err.Error(), "pre-secret") {
		t.Errorf("the error shows the secret: %v", err)
	}
	if l := srv.Log(t); len(l.Authorize) != 1 {
		t.Errorf("authorize requests = %d, want only the first login's", len(l.Authorize))
	}
}

// TestPreRegisteredClientAfterMigration: a configured client ID without
// auth.issuer is not shown to a new authorization server the resource
// moved to; the error says how to go on, and auth.issuer naming the new
// server does.
func TestPreRegisteredClientAfterMigration(t *testing.T) {
	oldAS := authtest.Start(t, "OAUTH_STATIC_CLIENT=pre-registered:pre-secret")
	newAS := authtest.Start(t, "OAUTH_STATIC_CLIENT=pre-registered:pre-secret")
	store := &auth.FileStore{Dir: t.TempDir()}
	withIssuer := func(issuer string) *auth.Authenticator {
		a, err := auth.New(&auth.Options{Server: "remote", URL: oldAS.URL, Store: store,
			Config: &config.Auth{ClientID: "pre-registered", ClientSecret: "pre-secret", Issuer: issuer}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	login(t, withIssuer(""))
	oldAS.MigrateTo(t, newAS)
	_, err := withIssuer("").StartLogin(context.Background())
	if err == nil || !strings.Contains(err.Error(), oldAS.Base+"/") || !strings.Contains(err.Error(), newAS.Base+"/") || !strings.Contains(err.Error(), "auth.issuer") {
		t.Fatalf("login after the move: %v, want an error naming both servers and auth.issuer", err)
	}
	if l := newAS.Log(t); len(l.Authorize) != 0 || len(l.Token) != 0 {
		t.Errorf("the new server saw the client: %d authorize, %d token requests", len(l.Authorize), len(l.Token))
	}
	a := withIssuer(newAS.Base + "/")
	login(t, a)
	if code, err := mcpCall(a, oldAS.URL); err != nil || code != 200 {
		t.Fatalf("after logging in with the new server: %d, %v", code, err)
	}
}
