package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
)

func TestRegister(t *testing.T) {
	var sent map[string]any
	status, answer := http.StatusCreated, `{"client_id":"new-client","client_secret":"issued","token_endpoint_auth_method":"client_secret_basic"}`
	s := newSite(t, func(string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{"/register": func(w http.ResponseWriter, r *http.Request) {
			sent = nil
			json.NewDecoder(r.Body).Decode(&sent)
			w.WriteHeader(status)
			w.Write([]byte(answer))
		}}
	})
	md := &Metadata{RegistrationEndpoint: s.URL + "/register"}
	ctx := context.Background()

	c, err := Register(ctx, s.Client(), md, "mcpx", []string{"http://127.0.0.1:5000/callback"}, []string{"mcp:read", "mcp:admin"})
	if err != nil {
		t.Fatal(err)
	}
	// The server may issue a secret to a client that asked for none, and
	// say how to present it (RFC 7591 §3.2.1).
	if *c != (Client{ID: "new-client", Secret: "issued", AuthMethod: AuthBasic}) {
		t.Errorf("client = %+v", c)
	}
	want := map[string]any{
		"client_name":                "mcpx",
		"redirect_uris":              []any{"http://127.0.0.1:5000/callback"},
		"grant_types":                []any{"authorization_code", "refresh_token"},
		"response_types":             []any{"code"},
		"token_endpoint_auth_method": "none",
		"scope":                      "mcp:read mcp:admin",
		"application_type":           "native",
	}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("registration request = %v, want %v", sent, want)
	}

	status, answer = http.StatusBadRequest, `{"error":"invalid_redirect_uri","error_description":"loopback only"}`
	_, err = Register(ctx, s.Client(), md, "mcpx", []string{"http://example.com/cb"}, nil)
	var oe *Error
	if !errors.As(err, &oe) || oe.Code != "invalid_redirect_uri" || oe.Description != "loopback only" {
		t.Errorf("refused registration: err = %v, want an *Error invalid_redirect_uri", err)
	}
	if _, ok := sent["scope"]; ok {
		t.Errorf("a registration without scopes sent scope %q", sent["scope"])
	}

	status, answer = http.StatusOK, `{"client_secret":"x"}`
	if _, err := Register(ctx, s.Client(), md, "mcpx", []string{"http://127.0.0.1/cb"}, nil); err == nil {
		t.Error("a registration answer without client_id was taken")
	}

	if _, err := Register(ctx, s.Client(), &Metadata{}, "mcpx", nil, nil); err == nil {
		t.Error("registered without a registration endpoint")
	}
}

// TestApplicationType: MCP 2026-07-28 (SEP-837) has a client name its
// application type, which OpenID servers check redirect URIs against: a
// CLI's loopback callbacks make it a native application.
func TestApplicationType(t *testing.T) {
	for _, c := range []struct {
		uris []string
		want string
	}{
		{[]string{"http://127.0.0.1:5000/callback"}, "native"},
		{[]string{"http://localhost/cb", "http://[::1]:8080/cb"}, "native"},
		{[]string{"com.example.app:/oauth"}, "native"},
		{[]string{"https://app.example.com/cb"}, "web"},
		{[]string{"http://127.0.0.1/cb", "https://app.example.com/cb"}, "web"},
	} {
		if got := applicationType(c.uris); got != c.want {
			t.Errorf("applicationType(%v) = %q, want %q", c.uris, got, c.want)
		}
	}
}
