package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseAuth(t *testing.T) {
	env := map[string]string{"SECRET": "s3cret-value"}
	for _, tc := range []struct {
		name, entry string
		want        *Auth
		oauth       bool
	}{
		{"absent", `{"url": "http://h/mcp"}`, nil, true},
		{"false", `{"url": "http://h/mcp", "auth": false}`, &Auth{Disabled: true}, false},
		{"true", `{"url": "http://h/mcp", "auth": true}`, &Auth{}, true},
		{"full", `{"url": "http://h/mcp", "auth": {"clientId": "mcpx-app", "clientSecret": "${SECRET}", "scopes": ["read", "write"], "redirectPort": 8765}}`,
			&Auth{ClientID: "mcpx-app", ClientSecret: "s3cret-value", Scopes: []string{"read", "write"}, RedirectPort: 8765}, true},
		{"pre-registered with its issuer", `{"url": "http://h/mcp", "auth": {"clientId": "c", "issuer": "https://as.example.com"}}`,
			&Auth{ClientID: "c", Issuer: "https://as.example.com"}, true},
		{"client metadata document", `{"url": "http://h/mcp", "auth": {"clientMetadataUrl": "https://mcpx.example.com/client.json"}}`,
			&Auth{ClientMetadataURL: "https://mcpx.example.com/client.json"}, true},
		{"static Authorization wins", `{"url": "http://h/mcp", "headers": {"authorization": "Bearer x"}, "auth": {"scopes": ["a"]}}`,
			&Auth{Scopes: []string{"a"}}, false},
		{"other headers keep OAuth", `{"url": "http://h/mcp", "headers": {"X-Team": "t"}}`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, "mcpx.json", `{"servers": {"s": `+tc.entry+`}}`, env)
			s := cfg.Servers[0]
			if !reflect.DeepEqual(s.Auth, tc.want) {
				t.Errorf("Auth = %+v, want %+v", s.Auth, tc.want)
			}
			if s.OAuth() != tc.oauth {
				t.Errorf("OAuth() = %v, want %v", s.OAuth(), tc.oauth)
			}
		})
	}
	cfg := mustParse(t, "mcpx.json", `{"servers": {"s": {"url": "http://h/mcp", "auth": {"clientId": "c", "clientSecret": "${SECRET}"}}}}`, env)
	if !slices.Contains(cfg.Secrets(), "s3cret-value") {
		t.Error("the client secret is not among Secrets, so the logger would not redact it")
	}
	cfg = mustParse(t, "mcpx.json", `{"servers": {"s": {"command": "c", "auth": false}}}`, env)
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "servers.s.auth") || cfg.Servers[0].OAuth() {
		t.Errorf("auth on a stdio server: warnings %q, OAuth %v", cfg.Warnings, cfg.Servers[0].OAuth())
	}
}

func TestParseAuthErrors(t *testing.T) {
	env := map[string]string{"SECRET": "s3cret-value"}
	for _, tc := range []struct{ name, auth, field, msg string }{
		{"a string", `"oauth"`, "auth", "want false, true or an object"},
		{"literal secret", `{"clientId": "c", "clientSecret": "hunter2"}`, "auth.clientSecret", "${VAR} reference"},
		{"secret without id", `{"clientSecret": "${SECRET}"}`, "auth.clientSecret", "without clientId"},
		{"scopes not a list", `{"scopes": "read write"}`, "auth.scopes", "want a list"},
		{"scope with a space", `{"scopes": ["read write"]}`, "auth.scopes[0]", "one word"},
		{"port a string", `{"redirectPort": "8080"}`, "auth.redirectPort", "port number"},
		{"port zero", `{"redirectPort": 0}`, "auth.redirectPort", "port number"},
		{"port too big", `{"redirectPort": 70000}`, "auth.redirectPort", "port number"},
		{"clientId a number", `{"clientId": 5}`, "auth.clientId", "want a string"},
		{"issuer without clientId", `{"issuer": "https://as.example.com"}`, "auth.issuer", "without clientId"},
		{"issuer not a URL", `{"clientId": "c", "issuer": "as.example.com"}`, "auth.issuer", "http(s) URL"},
		{"metadata document over http", `{"clientMetadataUrl": "http://mcpx.example.com/client.json"}`, "auth.clientMetadataUrl", "https URL"},
		{"metadata document without a path", `{"clientMetadataUrl": "https://mcpx.example.com/"}`, "auth.clientMetadataUrl", "with a path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := `{"servers": {"s": {"url": "http://h/mcp", "auth": ` + tc.auth + `}}}`
			_, err := Parse("mcpx.json", []byte(data), &LoadOptions{LookupEnv: envMap(env)})
			var e *Error
			if !errors.As(err, &e) || e.Server != "s" || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
				t.Fatalf("got %v, want servers.s.%s: ...%s...", err, tc.field, tc.msg)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}
