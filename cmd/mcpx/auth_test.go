package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/upstream/auth"
	"github.com/mcpx/mcpx/upstream/auth/authtest"
)

// authSetup points the token store at a temporary config dir (files, not
// the keychain) and $BROWSER at this test binary playing the browser.
func authSetup(t *testing.T) (tokens string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("MCPX_KEYRING", "off")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", "env "+browseEnv+"=1 "+exe)
	t.Setenv("STATIC_TOKEN", "static-secret-123")
	return filepath.Join(home, "mcpx", "tokens")
}

func authConfig(t *testing.T, srv *authtest.Server) string {
	return writeConfig(t, map[string]any{"servers": map[string]any{
		"remote": map[string]any{"url": srv.URL},
		"off":    map[string]any{"url": srv.URL, "auth": false},
		"static": map[string]any{"url": srv.URL, "headers": map[string]any{"Authorization": "Bearer ${STATIC_TOKEN}"}},
		"local":  fx(),
	}})
}

func authStatus(t *testing.T, cfg string) map[string]authStatusJSON {
	t.Helper()
	out, errs, code := runCLI(t, "", "auth", "status", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("auth status: %d\n%s", code, errs)
	}
	var rows []authStatusJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("auth status --json: %v\n%s", err, out)
	}
	m := map[string]authStatusJSON{}
	for _, r := range rows {
		m[r.Name] = r
	}
	return m
}

func TestAuthLoginStatusLogout(t *testing.T) {
	tokensDir := authSetup(t)
	srv := authtest.Start(t)
	cfg := authConfig(t, srv)

	st := authStatus(t, cfg)
	if len(st) != 3 {
		t.Errorf("auth status lists %d servers, want the 3 remote ones: %+v", len(st), st)
	}
	for name, want := range map[string]string{"remote": "needs login", "off": "not required", "static": "not required"} {
		if st[name].State != want {
			t.Errorf("before login, %s is %q, want %q", name, st[name].State, want)
		}
	}
	if !strings.Contains(st["remote"].Note, "mcpx auth login remote") {
		t.Errorf("the note does not say how to log in: %q", st["remote"].Note)
	}

	// `mcpx servers` shows the state, and the server's tools are absent.
	out, _, _ := runCLI(t, "", "servers", "--json", "--config", cfg)
	var servers []serverJSON
	if err := json.Unmarshal([]byte(out), &servers); err != nil {
		t.Fatalf("servers --json: %v\n%s", err, out)
	}
	for _, s := range servers {
		if s.Name == "remote" && (s.State != "needs login" || s.Tools != 0 || !strings.Contains(s.Error, "mcpx auth login remote")) {
			t.Errorf("servers before login: %+v", s)
		}
	}

	out, errs, code := runCLI(t, "", "auth", "login", "remote", "--timeout", "30s", "--config", cfg)
	if code != 0 {
		t.Fatalf("auth login: %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	want := "Logged in to remote as alice@example.test with scopes mcp:read; the token expires in 1h0m and is refreshed as needed; stored in " + tokensDir
	if strings.TrimSpace(out) != want {
		t.Errorf("auth login said\n%s\nwant\n%s", out, want)
	}
	if !strings.Contains(errs, srv.Base+"/authorize?") {
		t.Errorf("the authorization URL was not printed for when no browser opens:\n%s", errs)
	}

	// The tokens are in a 0600 file, and nowhere else.
	entries, err := os.ReadDir(tokensDir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("token files: %v, %v", entries, err)
	}
	fi, _ := entries[0].Info()
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	rec, err := (&auth.FileStore{Dir: tokensDir}).Load(t.Context(), auth.Key("remote", srv.URL))
	if err != nil || rec.Token == nil {
		t.Fatalf("stored login: %+v, %v", rec, err)
	}
	secrets := []string{rec.Token.AccessToken, rec.Token.RefreshToken}
	cfgText, _ := os.ReadFile(cfg)

	st = authStatus(t, cfg)
	if r := st["remote"]; r.State != "logged in" || r.ExpiresAt == nil || time.Until(*r.ExpiresAt) < 50*time.Minute || !r.Refreshable || r.Account != "alice@example.test" || r.Issuer != srv.Base+"/" {
		t.Errorf("after login: %+v", r)
	}
	table, _, _ := runCLI(t, "", "auth", "status", "--config", cfg)
	if !strings.Contains(table, "remote\tlogged in (expires in ") {
		t.Errorf("auth status table:\n%s", table)
	}
	srvOut, srvErr, _ := runCLI(t, "", "servers", "--json", "--config", cfg)
	servers = nil
	if err := json.Unmarshal([]byte(srvOut), &servers); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if s.Name == "remote" && (s.State != "ready" || s.Tools != 3) {
			t.Errorf("servers after login: %+v", s)
		}
	}
	callOut, callErr, code := runCLI(t, "", "call", "remote_echo", `{"message":"through OAuth"}`, "--config", cfg)
	if code != 0 || !strings.Contains(callOut, "through OAuth") {
		t.Errorf("call through the login: %d\n%s\n%s", code, callOut, callErr)
	}
	for _, s := range secrets {
		for what, text := range map[string]string{"login output": out + errs, "status": table, "servers": srvOut + srvErr,
			"call": callOut + callErr, "config file": string(cfgText)} {
			if strings.Contains(text, s) {
				t.Errorf("a token appears in the %s", what)
			}
		}
	}

	out, errs, code = runCLI(t, "", "auth", "logout", "remote", "--config", cfg)
	if code != 0 || strings.TrimSpace(out) != "Logged out of remote: the tokens were revoked and deleted" {
		t.Errorf("auth logout: %d\n%s%s", code, out, errs)
	}
	if l := srv.Log(t); len(l.Revoke) != 2 {
		t.Errorf("revocations = %d, want 2 (refresh and access token)", len(l.Revoke))
	}
	if st := authStatus(t, cfg); st["remote"].State != "needs login" {
		t.Errorf("after logout: %+v", st["remote"])
	}
	out, _, _ = runCLI(t, "", "auth", "logout", "remote", "--config", cfg)
	if !strings.Contains(out, "No stored login for remote") {
		t.Errorf("second logout said %q", out)
	}
}

func TestAuthLoginRefusals(t *testing.T) {
	authSetup(t)
	srv := authtest.Start(t)
	cfg := authConfig(t, srv)
	for _, tc := range []struct{ server, msg string }{
		{"off", `"auth": false`},
		{"static", "static Authorization header"},
		{"local", "logins are for remote (url) servers"},
		{"nope", `no server "nope"`},
	} {
		_, errs, code := runCLI(t, "", "auth", "login", tc.server, "--config", cfg)
		if code != 2 || !strings.Contains(errs, tc.msg) {
			t.Errorf("auth login %s: %d %q, want exit 2 and %q", tc.server, code, errs, tc.msg)
		}
		if strings.Contains(errs, "static-secret-123") {
			t.Errorf("the static token leaked: %s", errs)
		}
	}
}

// TestAuthLoginPreregisteredClient: a configured clientId and clientSecret
// (from ${VAR}) and a fixed redirectPort are used instead of dynamic
// registration; a server that answers without a 401 is "not required".
func TestAuthLoginPreregisteredClient(t *testing.T) {
	authSetup(t)
	srv := authtest.Start(t, "OAUTH_STATIC_CLIENT=pre-app:pre-secret-456")
	t.Setenv("APP_SECRET", "pre-secret-456")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"remote": map[string]any{"url": srv.URL, "auth": map[string]any{
			"clientId": "pre-app", "clientSecret": "${APP_SECRET}", "scopes": []string{"mcp:admin"}, "redirectPort": port}},
		"open": map[string]any{"url": srv.Base + "/open"},
	}})
	out, errs, code := runCLI(t, "", "auth", "login", "remote", "--config", cfg)
	if code != 0 {
		t.Fatalf("auth login: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "with scopes mcp:admin mcp:read;") {
		t.Errorf("login said %q, want the configured and the challenged scopes", out)
	}
	l := srv.Log(t)
	if len(l.Registrations) != 0 {
		t.Errorf("mcpx registered although the config gives a clientId: %+v", l.Registrations)
	}
	az := l.Authorize[0]
	if az["client_id"] != "pre-app" || az["redirect_uri"] != "http://127.0.0.1:"+strconv.Itoa(port)+"/callback" {
		t.Errorf("authorize: client_id %q, redirect_uri %q", az["client_id"], az["redirect_uri"])
	}
	if len(l.Token) != 1 || l.Token[0].ClientID != "pre-app" || !l.Token[0].HasClientSecret {
		t.Errorf("token request %+v, want the configured client with its secret", l.Token)
	}
	st := authStatus(t, cfg)
	if st["open"].State != "not required" || st["remote"].State != "logged in" {
		t.Errorf("status: %+v", st)
	}
	table, tErrs, _ := runCLI(t, "", "auth", "status", "--config", cfg)
	for _, text := range []string{out, errs, table, tErrs} {
		if strings.Contains(text, "pre-secret-456") {
			t.Errorf("the client secret leaked: %s", text)
		}
	}
}
