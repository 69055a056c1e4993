package accesstoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpx/mcpx/config"
)

// issuer is an authorization server's metadata and JWK Set, with keys it
// can rotate; the real one the binary's tests use is
// testdata/node/oauth-server.mjs, this one makes the tokens no issuer
// would.
type issuer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey // private; the set serves their public halves
	fetches atomic.Int32
}

func newIssuer(t *testing.T) *issuer {
	iss := &issuer{}
	iss.rotate(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": iss.URL + "/", "authorization_endpoint": iss.URL + "/authorize",
			"token_endpoint": iss.URL + "/token", "jwks_uri": iss.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		iss.mu.Lock()
		defer iss.mu.Unlock()
		var set jose.JSONWebKeySet
		for _, k := range iss.keys {
			set.Keys = append(set.Keys, k.Public())
		}
		json.NewEncoder(w).Encode(set)
	})
	iss.Server = httptest.NewServer(mux)
	t.Cleanup(iss.Close)
	return iss
}

// rotate makes a new signing key, which the set then serves alone.
func (iss *issuer) rotate(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.keys = []jose.JSONWebKey{{Key: k, KeyID: rand.Text()[:12], Algorithm: "RS256", Use: "sig"}}
}

// sign signs claims with the issuer's current key.
func (iss *issuer) sign(t *testing.T, claims map[string]any) string {
	iss.mu.Lock()
	k := iss.keys[0]
	iss.mu.Unlock()
	return signWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: k}, claims)
}

func signWith(t *testing.T, key jose.SigningKey, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

const resource = "https://mcp.example.test/mcp"

// good are the claims of a token the checker takes.
func (iss *issuer) good(more map[string]any) map[string]any {
	c := map[string]any{"iss": iss.URL + "/", "aud": resource, "sub": "alice", "exp": time.Now().Add(time.Hour).Unix(),
		"iat": time.Now().Unix(), "scope": "mcp:use mcp:read"}
	for k, v := range more {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func TestCheck(t *testing.T) {
	iss := newIssuer(t)
	c := New(config.OAuth{Issuer: iss.URL + "/", Scopes: []string{"mcp:use"}, Profiles: []config.OAuthProfileRule{
		{Scope: "mcp:admin"}, {Claim: "groups", Value: "eng", Profile: "eng"}, {Scope: "mcp:read", Profile: "read"},
	}}, nil)
	ctx := context.Background()

	tok, err := c.Check(ctx, iss.sign(t, iss.good(nil)), resource)
	if err != nil || tok.Principal != "oauth:alice" || tok.Profile != "read" {
		t.Fatalf("a good token: %+v, %v", tok, err)
	}
	for _, tc := range []struct {
		more    map[string]any
		profile string
	}{
		{map[string]any{"scope": "mcp:use mcp:admin mcp:read"}, ""},
		{map[string]any{"groups": []string{"ops", "eng"}}, "eng"},
		{map[string]any{"scope": nil, "scp": []string{"mcp:use", "mcp:read"}}, "read"},
		{map[string]any{"aud": []string{"https://other.test", resource}}, "read"},
	} {
		tok, err := c.Check(ctx, iss.sign(t, iss.good(tc.more)), resource)
		if err != nil || tok.Profile != tc.profile {
			t.Errorf("claims %v: %+v, %v; want profile %q", tc.more, tok, err, tc.profile)
		}
	}

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	goodRaw := iss.sign(t, iss.good(nil))
	parts := strings.Split(goodRaw, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), "alice", "admin", 1))) + "." + parts[2]
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	unsigned := header + "." + parts[1] + "."
	for _, tc := range []struct {
		name, raw, code, want string
	}{
		{"expired", iss.sign(t, iss.good(map[string]any{"exp": time.Now().Add(-2 * time.Minute).Unix()})), "invalid_token", "expired at"},
		{"no expiry", iss.sign(t, iss.good(map[string]any{"exp": nil})), "invalid_token", "no expiry"},
		{"not yet valid", iss.sign(t, iss.good(map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})), "invalid_token", "not valid before"},
		{"wrong audience", iss.sign(t, iss.good(map[string]any{"aud": "https://other.test/mcp"})), "invalid_token", `audience ["https://other.test/mcp"] is not this server`},
		{"wrong issuer", iss.sign(t, iss.good(map[string]any{"iss": "https://evil.test/"})), "invalid_token", `issued by "https://evil.test/"`},
		{"unsigned", unsigned, "invalid_token", "not a JWT signed with an asymmetric algorithm"},
		{"tampered", tampered, "invalid_token", "the signature does not verify"},
		{"another key", signWith(t, jose.SigningKey{Algorithm: jose.ES256, Key: other}, iss.good(nil)), "invalid_token", "the signature does not verify"},
		{"hmac", signWith(t, jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, iss.good(nil)), "invalid_token", "asymmetric"},
		{"not a JWT", "mcpx_notajwt", "invalid_token", "not a JWT"},
		{"no subject", iss.sign(t, iss.good(map[string]any{"sub": nil})), "invalid_token", "no sub claim"},
		{"missing scope", iss.sign(t, iss.good(map[string]any{"scope": "mcp:read"})), "insufficient_scope", "lacks scope mcp:use"},
		{"no rule", iss.sign(t, iss.good(map[string]any{"scope": "mcp:use"})), "insufficient_scope", "no http.oauth.profiles rule"},
	} {
		tok, err := c.Check(ctx, tc.raw, resource)
		e := AsError(err)
		if e == nil || e.Code != tc.code || !strings.Contains(e.Description, tc.want) {
			t.Errorf("%s: %+v, %v; want %s %q", tc.name, tok, err, tc.code, tc.want)
		}
	}
}

// TestRotation: a token signed with a key the cached set lacks makes the
// checker fetch the set again, at once; a flood of made-up key IDs costs
// the issuer at most a fetch a second.
func TestRotation(t *testing.T) {
	iss := newIssuer(t)
	c := New(config.OAuth{Issuer: iss.URL}, nil)
	ctx := context.Background()
	if _, err := c.Check(ctx, iss.sign(t, iss.good(nil)), resource); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Check(ctx, iss.sign(t, iss.good(nil)), resource); err != nil || iss.fetches.Load() != 1 {
		t.Fatalf("a second token: %v, %d fetches; want the cached keys", err, iss.fetches.Load())
	}
	old := iss.sign(t, iss.good(nil))
	iss.rotate(t)
	if _, err := c.Check(ctx, iss.sign(t, iss.good(nil)), resource); err != nil {
		t.Fatalf("a token of the new key: %v", err)
	}
	if n := iss.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after the rotation, want 2", n)
	}
	if _, err := c.Check(ctx, old, resource); err == nil || !strings.Contains(err.Error(), "has no key") {
		t.Errorf("a token of the withdrawn key: %v", err)
	}

	// Made-up key IDs, all at once: the fetches they cause are one per
	// minRefetch, however many there are.
	start, before := time.Now(), iss.fetches.Load()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"made-up-` + string(rune('a'+i%26)) + `"}`))
			parts := strings.Split(old, ".")
			c.Check(ctx, h+"."+parts[1]+"."+parts[2], resource)
		}()
	}
	wg.Wait()
	if n, most := iss.fetches.Load()-before, int32(time.Since(start)/minRefetch)+1; n > most {
		t.Errorf("%d fetches for 50 made-up key IDs in %v, want at most %d", n, time.Since(start), most)
	}
}

// TestKeysUnreachable: keys that were fetched stay in use while the
// issuer is down; with none fetched, the refusal says why.
func TestKeysUnreachable(t *testing.T) {
	iss := newIssuer(t)
	c := New(config.OAuth{Issuer: iss.URL}, nil)
	raw := iss.sign(t, iss.good(nil))
	if _, err := c.Check(context.Background(), raw, resource); err != nil {
		t.Fatal(err)
	}
	c.keys.mu.Lock()
	c.keys.expires = time.Now().Add(-time.Second) // stale
	c.keys.mu.Unlock()
	iss.Close()
	if _, err := c.Check(context.Background(), raw, resource); err != nil {
		t.Errorf("with the issuer down, a token of a key fetched before: %v", err)
	}
	down := New(config.OAuth{Issuer: iss.URL}, nil)
	if _, err := down.Check(context.Background(), raw, resource); err == nil || !strings.Contains(err.Error(), "the issuer's metadata") {
		t.Errorf("with the issuer down from the start: %v", err)
	}
}

func TestKeysTTL(t *testing.T) {
	for cc, want := range map[string]time.Duration{
		"":                       defaultKeysTTL,
		"public, max-age=3600":   time.Hour,
		"max-age=1":              minKeysTTL,
		"max-age=99999999":       maxKeysTTL,
		"no-store":               minKeysTTL,
		"max-age=notanumber, x=": defaultKeysTTL,
	} {
		if got := keysTTL(cc); got != want {
			t.Errorf("keysTTL(%q) = %v, want %v", cc, got, want)
		}
	}
}

// TestResource: the identifiers, metadata and challenges of /mcp and of a
// profile's path, from the request's Host or http.oauth.resource.
func TestResource(t *testing.T) {
	c := New(config.OAuth{Issuer: "https://auth.test/", Scopes: []string{"mcp:use"}, Profiles: []config.OAuthProfileRule{{Scope: "mcp:read", Profile: "read"}}}, nil)
	r := httptest.NewRequest("POST", "http://127.0.0.1:7777/mcp/read", nil)
	res := c.ResourceOf(r, r.URL.Path)
	if res.ID != "http://127.0.0.1:7777/mcp/read" || res.Base != "http://127.0.0.1:7777/mcp" ||
		res.MetadataURL != "http://127.0.0.1:7777/.well-known/oauth-protected-resource/mcp/read" || len(res.Audiences()) != 2 {
		t.Errorf("resource %+v", res)
	}
	pinned := New(config.OAuth{Issuer: "https://auth.test/", Resource: "https://mcp.example.test/team/mcp"}, nil)
	if res := pinned.ResourceOf(r, "/mcp"); res.ID != "https://mcp.example.test/team/mcp" || res.MetadataURL != "https://mcp.example.test/.well-known/oauth-protected-resource/team/mcp" {
		t.Errorf("with http.oauth.resource: %+v", res)
	}

	got := c.Challenge(res, &Error{Code: "invalid_token", Description: `it expired "now"` + "\n"})
	want := `Bearer resource_metadata="http://127.0.0.1:7777/.well-known/oauth-protected-resource/mcp/read", error="invalid_token", error_description="it expired \"now\"?", scope="mcp:use"`
	if got != want {
		t.Errorf("challenge\n%s\nwant\n%s", got, want)
	}

	for path, want := range map[string]string{
		"/.well-known/oauth-protected-resource":          "http://127.0.0.1:7777/mcp",
		"/.well-known/oauth-protected-resource/mcp":      "http://127.0.0.1:7777/mcp",
		"/.well-known/oauth-protected-resource/mcp/read": "http://127.0.0.1:7777/mcp/read",
		"/.well-known/oauth-protected-resource/mcp/none": "",
		"/.well-known/oauth-protected-resource/other":    "",
	} {
		w := httptest.NewRecorder()
		c.ServeMetadata(w, httptest.NewRequest("GET", "http://127.0.0.1:7777"+path, nil), func(p string) bool { return p == "read" })
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		json.Unmarshal(w.Body.Bytes(), &doc)
		if want == "" {
			if w.Code != http.StatusNotFound {
				t.Errorf("%s: %d, want 404", path, w.Code)
			}
			continue
		}
		if w.Code != 200 || doc.Resource != want || doc.AuthorizationServers[0] != "https://auth.test/" || strings.Join(doc.ScopesSupported, " ") != "mcp:use mcp:read" {
			t.Errorf("%s: %d %s", path, w.Code, w.Body)
		}
	}
}
