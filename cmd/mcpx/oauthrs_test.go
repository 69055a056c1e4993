package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/upstream/auth/authtest"
)

// TestOAuthResourceServer: serve --http with http.oauth is an OAuth 2.1
// resource server for the real authorization server of the OAuth tests
// (the official TypeScript SDK's, issuing JWTs): a client without a token
// is told where the resource's metadata is; mcpx's own client logs in
// through it (discovery, registration, PKCE, the resource indicator) and
// is let in; the token's scope picks the profile it sees in both eras; the
// trail names the token's subject; expired, wrong-audience, wrong-issuer,
// unsigned, tampered and under-scoped tokens are refused, each saying why;
// a rotated signing key is fetched at once.
func TestOAuthResourceServer(t *testing.T) {
	authSetup(t)
	as := authtest.Start(t, "OAUTH_JWT=1")
	state := t.TempDir()
	cfg := writeConfig(t, map[string]any{"expose": "direct",
		"servers":  map[string]any{"a": fx(), "b": fx()},
		"profiles": map[string]any{"onlya": map[string]any{"servers": []string{"a"}}},
		"http": map[string]any{"oauth": map[string]any{
			"issuer": as.Base + "/",
			"scopes": []string{"mcp:read"},
			"profiles": []map[string]any{
				{"scope": "mcp:admin"},                    // everything
				{"scope": "mcp:read", "profile": "onlya"}, // the rest
			},
		}},
	})
	if out, _, _ := runCLI(t, "", "doctor", "--config", cfg); !strings.Contains(out, "http.oauth: the issuer "+as.Base+"/ publishes 1 signing keys ("+as.Base+"/jwks)") {
		t.Errorf("doctor does not say the issuer's keys are there:\n%s", out)
	}
	srv := startHTTP(t, cfg, []string{"XDG_STATE_HOME=" + state})
	url := srv.url + "/mcp"
	meta := `{"_meta":` + modernMeta(`{}`) + `}`
	as_ := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	// No token: the challenge names the metadata, which names the issuer.
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	prm := srv.url + "/.well-known/oauth-protected-resource/mcp"
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(ch, `resource_metadata="`+prm+`"`) || !strings.Contains(ch, `scope="mcp:read"`) {
		t.Fatalf("no token: HTTP %d, WWW-Authenticate %q", resp.StatusCode, ch)
	}
	resp, err = http.Get(prm)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if doc.Resource != url || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != as.Base+"/" {
		t.Fatalf("the resource metadata: %+v", doc)
	}

	// mcpx's own client logs in to it as to any protected server.
	client := writeConfig(t, map[string]any{"servers": map[string]any{"team": map[string]any{"url": url}}})
	if _, errs, code := runCLI(t, "", "auth", "login", "team", "--timeout", "30s", "--config", client); code != 0 {
		t.Fatalf("auth login team: %d\n%s", code, errs)
	}
	out, errs, code := runCLI(t, "", "list", "tools", "--json", "--config", client)
	var listed []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != 0 || len(listed) == 0 {
		t.Fatalf("list tools through the login: %d %v\n%s%s", code, err, out, errs)
	}
	for _, tool := range listed {
		if !strings.HasPrefix(tool.Name, "team_a_") {
			t.Errorf("a token of scope mcp:read shows %s, want profile onlya's tools alone", tool.Name)
		}
	}
	if lg := as.Log(t); len(lg.Token) == 0 || lg.Token[0].Resource != url {
		t.Errorf("the token was not asked for the resource %s: %+v", url, lg.Token)
	}

	// Both eras, with tokens the issuer signs: the scope picks the profile.
	reader := as.Mint(t, map[string]any{"aud": url}, nil)
	admin := as.Mint(t, map[string]any{"aud": url, "scope": "mcp:read mcp:admin"}, nil)
	for tok, want := range map[string]bool{reader: true, admin: false} {
		r := post(t, url, "tools/list", "", meta, as_(tok))
		if names := toolNamesOf(t, []byte(`{"tools":`+string(r.Result["tools"])+`}`)); r.status != 200 || allPrefixed(names, "a_") != want {
			t.Errorf("modern tools/list: HTTP %d %q; want only a's: %v", r.status, names, want)
		}
	}
	call := `{"name":"a_echo","arguments":{"message":"hi"},"_meta":` + modernMeta(`{}`) + `}`
	if r := post(t, url, "tools/call", "a_echo", call, as_(reader)); r.status != 200 || r.Error != nil {
		t.Errorf("modern call: HTTP %d %+v", r.status, r.Error)
	}
	status, sid, _ := legacyPost(t, url, "", "Bearer "+reader,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"oauthtest","version":"1"}}}`)
	if status != 200 || sid == "" {
		t.Fatalf("legacy initialize: HTTP %d", status)
	}
	legacyPost(t, url, sid, "Bearer "+reader, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _, res := legacyPost(t, url, sid, "Bearer "+reader, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if names := toolNamesOf(t, res); !allPrefixed(names, "a_") {
		t.Errorf("legacy tools/list as a reader: %q", names)
	}
	if status, _, _ := legacyPost(t, url, sid, "Bearer "+admin, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); status != 404 {
		t.Errorf("another principal on the reader's session: HTTP %d, want 404", status)
	}

	// Refused, each saying why in the challenge.
	other := authtest.Start(t, "OAUTH_JWT=1")
	parts := strings.Split(reader, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"scope":"mcp:read"`, `"scope":"mcp:read mcp:admin"`, 1))) + "." + parts[2]
	unsigned := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + "."
	for _, tc := range []struct {
		name, token string
		status      int
		want        string
	}{
		{"expired", as.Mint(t, map[string]any{"aud": url, "exp": time.Now().Add(-time.Hour).Unix()}, nil), 401, "expired at"},
		{"wrong audience", as.Mint(t, map[string]any{"aud": "http://127.0.0.1:1/mcp"}, nil), 401, "is not this server"},
		{"wrong issuer", other.Mint(t, map[string]any{"aud": url}, nil), 401, "invalid_token"},
		{"unsigned", unsigned, 401, "not a JWT signed"},
		{"tampered", tampered, 401, "the signature does not verify"},
		{"under-scoped", as.Mint(t, map[string]any{"aud": url, "scope": "mcp:other"}, nil), 403, `error="insufficient_scope"`},
		{"not a token", "mcpx_guess", 401, "not a JWT"},
	} {
		r := post(t, url, "tools/list", "", meta, as_(tc.token))
		ch := r.header.Get("WWW-Authenticate")
		if r.status != tc.status || !strings.Contains(ch, tc.want) || !strings.Contains(ch, `resource_metadata="`+prm+`"`) {
			t.Errorf("%s: HTTP %d, WWW-Authenticate %q; want %d naming %q", tc.name, r.status, ch, tc.status, tc.want)
		}
	}

	// The dashboard: an access token logs in, and its login sees the
	// token's profile.
	uiLogin := func(tok string) (int, []*http.Cookie) {
		req, _ := http.NewRequest("POST", srv.url+"/ui/login", strings.NewReader("token="+tok))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.url)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Cookies()
	}
	if code, cookies := uiLogin(as.Mint(t, map[string]any{"aud": url, "exp": time.Now().Add(-time.Hour).Unix()}, nil)); code != 401 || len(cookies) > 0 {
		t.Errorf("dashboard login with an expired token: HTTP %d, cookies %v", code, cookies)
	}
	code, cookies := uiLogin(reader)
	if code != http.StatusSeeOther || len(cookies) != 1 || cookies[0].MaxAge <= 0 || cookies[0].MaxAge > 3600 {
		t.Fatalf("dashboard login with an access token: HTTP %d, cookies %+v; want one lasting no longer than the token", code, cookies)
	}
	req, _ = http.NewRequest("GET", srv.url+"/ui/servers", nil)
	req.AddCookie(cookies[0])
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `data-server="a"`) || strings.Contains(string(page), `data-server="b"`) {
		t.Errorf("the dashboard of a reader's login: HTTP %d, want server a alone:\n%s", resp.StatusCode, page)
	}

	// A new signing key: its first token is let in.
	as.Rotate(t)
	if r := post(t, url, "tools/list", "", meta, as_(as.Mint(t, map[string]any{"aud": url}, nil))); r.status != 200 {
		t.Errorf("a token of the rotated key: HTTP %d", r.status)
	}

	// The trail names the token's subject.
	var named int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && named == 0; time.Sleep(50 * time.Millisecond) {
		named = 0
		for _, l := range auditLines(t, trailOf(state)) {
			if l.Principal == "oauth:user-1" && l.Server == "a" && l.Tool == "echo" {
				named++
			}
		}
	}
	if named == 0 {
		t.Errorf("no audit line names oauth:user-1: %+v", auditLines(t, trailOf(state)))
	}
	if strings.Contains(srv.stderr.String(), parts[2]) {
		t.Error("serve's log shows a token")
	}
}

// TestDoctorOAuthIssuerDown: doctor says when serve --http could not
// check a single access token.
func TestDoctorOAuthIssuerDown(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"a": fx()},
		"http": map[string]any{"oauth": map[string]any{"issuer": "http://127.0.0.1:1/"}}})
	out, _, code := runCLI(t, "", "doctor", "--config", cfg)
	if code != 1 || !strings.Contains(out, "http.oauth: the issuer's metadata") || !strings.Contains(out, "would refuse every access token") {
		t.Errorf("doctor with the issuer down: exit %d\n%s", code, out)
	}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
