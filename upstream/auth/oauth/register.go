package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Register registers a public client with the authorization server of md
// (RFC 7591) for the authorization code flow with refresh tokens, and
// returns its identity. The server may issue a secret, and say how to
// present it, all the same (RFC 7591 §3.2.1).
//
// The request names the application_type (OpenID Connect Registration
// §2, which MCP 2026-07-28 requires): "native" when every redirect URI is
// on a loopback host, as a CLI's are; else "web". An OpenID server
// assumes "web" without it and may then refuse loopback redirect URIs.
func Register(ctx context.Context, hc *http.Client, md *Metadata, name string, redirectURIs, scopes []string) (*Client, error) {
	if md.RegistrationEndpoint == "" {
		return nil, errors.New("the authorization server offers no dynamic client registration")
	}
	body := map[string]any{
		"client_name":                name,
		"redirect_uris":              redirectURIs,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": AuthNone,
		"application_type":           applicationType(redirectURIs),
	}
	if len(scopes) > 0 {
		body["scope"] = strings.Join(scopes, " ")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RegistrationEndpoint, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	a, err := send(noRedirects(hc), req)
	if err != nil {
		return nil, err
	}
	if err := errorOf(a); err != nil {
		return nil, err
	}
	var v struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(a.body, &v); err != nil {
		return nil, fmt.Errorf("the registration endpoint's answer is not a client registration: %w", err)
	}
	if v.ClientID == "" {
		return nil, errors.New("the registration endpoint's answer has no client_id")
	}
	return &Client{ID: v.ClientID, Secret: v.ClientSecret, AuthMethod: v.AuthMethod}, nil
}

// applicationType is "native" when every redirect URI is on a loopback
// host (or uses a private scheme, as apps do), else "web".
func applicationType(redirectURIs []string) string {
	for _, r := range redirectURIs {
		u, err := url.Parse(r)
		if err != nil {
			return "web"
		}
		if (u.Scheme == "http" || u.Scheme == "https") && !loopback(u.Hostname()) {
			return "web"
		}
	}
	return "native"
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
