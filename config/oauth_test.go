package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestOAuth: http.oauth as written, and each way it is wrong named in its
// error.
func TestOAuth(t *testing.T) {
	profiles := `"servers": {"fs": {"command": "fs"}}, "profiles": {"read": {"servers": ["fs"]}},`
	cfg := mustParse(t, "mcpx.json", `{`+profiles+`"http": {"oauth": {
		"issuer": "https://auth.example.test/",
		"resource": "https://mcp.example.test/mcp",
		"scopes": ["mcp:use"],
		"principalClaim": "email",
		"profiles": [{"scope": "mcp:read", "profile": "read"}, {"claim": "groups", "value": "admins"}]
	}}}`, nil)
	want := &OAuth{
		Issuer: "https://auth.example.test/", Resource: "https://mcp.example.test/mcp",
		Scopes: []string{"mcp:use"}, PrincipalClaim: "email",
		Profiles: []OAuthProfileRule{{Scope: "mcp:read", Profile: "read"}, {Claim: "groups", Value: "admins"}},
	}
	if !reflect.DeepEqual(cfg.HTTP.OAuth, want) {
		t.Errorf("oauth %+v, want %+v", cfg.HTTP.OAuth, want)
	}
	for _, tc := range []struct{ oauth, want string }{
		{`{}`, `http.oauth.issuer: required`},
		{`{"issuer": "auth.example.test"}`, `http.oauth.issuer: want an http(s) URL`},
		{`{"issuer": "https://a.test/", "jwksUrl": "file:///etc/keys"}`, `http.oauth.jwksUrl: want an http(s) URL`},
		{`{"issuer": "https://a.test/", "profiles": {"mcp:read": "read"}}`, `http.oauth.profiles: want a list`},
		{`{"issuer": "https://a.test/", "profiles": [{"profile": "read"}]}`, `http.oauth.profiles[0].scope: want scope, or claim and value`},
		{`{"issuer": "https://a.test/", "profiles": [{"claim": "groups", "profile": "read"}]}`, `http.oauth.profiles[0].value: required with claim`},
		{`{"issuer": "https://a.test/", "profiles": [{"scope": "s", "profile": "write"}]}`, `http.oauth.profiles[0].profile: unknown profile "write"`},
		{`"https://a.test/"`, `http.oauth: want an object`},
	} {
		_, err := Parse("mcpx.json", []byte(`{`+profiles+`"http": {"oauth": `+tc.oauth+`}}`), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("oauth %s: error %v, want %q", tc.oauth, err, tc.want)
		}
	}
}
