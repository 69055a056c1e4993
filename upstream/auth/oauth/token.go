package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Token is what a token endpoint issued (RFC 6749 §5.1), in the form mcpx
// stores it. Its JSON is that of mcp-go's transport.Token, which mcpx
// stored before, less expires_in: records saved either way read the same.
type Token struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token,omitempty"`
	// Scope is the scope granted, space-separated, when the server said.
	Scope string `json:"scope,omitempty"`
	// ExpiresAt is when the access token expires; zero when the server
	// did not say.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Grant is a token endpoint's successful answer.
type Grant struct {
	Token
	// IDToken is the OpenID Connect id_token, when the server sent one.
	// It is not verified, and not part of the Token that is stored.
	IDToken string
}

// Client is a client's identity at an authorization server (RFC 6749 §2):
// configured, a client ID metadata document's URL, or from [Register].
type Client struct {
	ID     string
	Secret string
	// AuthMethod is how the client authenticates at the token endpoint
	// (token_endpoint_auth_method): "client_secret_basic",
	// "client_secret_post" or "none". Empty picks one: none without a
	// secret; else client_secret_basic when the server's metadata lists
	// it and not client_secret_post; else client_secret_post.
	AuthMethod string
}

// The client authentication methods (RFC 6749 §2.3.1, RFC 7591 §2).
const (
	AuthBasic = "client_secret_basic"
	AuthPost  = "client_secret_post"
	AuthNone  = "none"
)

// Config is a client of one authorization server, for one protected
// resource: what the authorization code flow, refresh and revocation
// need. Its methods do not change it and are safe for concurrent use.
type Config struct {
	// Metadata is the authorization server's, from [Discover]; required.
	Metadata *Metadata
	// Resource is the resource indicator (RFC 8707) sent with the
	// authorization request and every token request; "" sends none.
	Resource string
	Client   Client
	// HTTPClient sends the requests; nil means http.DefaultClient. Each
	// request is bounded by its own 30s timeout anyway, and token
	// requests follow no redirect.
	HTTPClient *http.Client
	// Now is the clock that turns expires_in into ExpiresAt; nil means
	// time.Now.
	Now func() time.Time
}

// AuthCodeURL returns the authorization request's URL (RFC 6749 §4.1.1)
// with the PKCE S256 challenge (RFC 7636), state, scope and resource.
func (c *Config) AuthCodeURL(redirectURI, state, challenge string, scopes []string) (string, error) {
	if c.Metadata == nil {
		return "", errNoMetadata
	}
	u, err := absolute(c.Metadata.AuthorizationEndpoint)
	if err != nil {
		return "", fmt.Errorf("the authorization endpoint: %w", err)
	}
	q := u.Query() // an endpoint may carry a query of its own (RFC 6749 §3.1)
	q.Set("response_type", "code")
	q.Set("client_id", c.Client.ID)
	q.Set("redirect_uri", redirectURI)
	q.Set("state", state)
	q.Set("code_challenge", challenge)
	q.Set("code_challenge_method", "S256")
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	if c.Resource != "" {
		q.Set("resource", c.Resource)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

var errNoMetadata = errors.New("no authorization server metadata")

// Exchange trades an authorization code for tokens (RFC 6749 §4.1.3),
// proving the PKCE verifier. redirectURI is the one the authorization
// request carried.
func (c *Config) Exchange(ctx context.Context, redirectURI, code, verifier string) (*Grant, error) {
	g, err := c.token(ctx, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"code_verifier": {verifier},
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Refresh trades a refresh token for new tokens (RFC 6749 §6). When the
// server sends no new refresh token, the old one stays in the Grant.
//
// golang.org/x/oauth2 cannot send the resource indicator with a refresh,
// which MCP requires (RFC 8707 §2.2): one reason this package exists.
func (c *Config) Refresh(ctx context.Context, refreshToken string) (*Grant, error) {
	g, err := c.token(ctx, url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {refreshToken},
	})
	if err != nil {
		return nil, err
	}
	if g.RefreshToken == "" {
		g.RefreshToken = refreshToken
	}
	return g, nil
}

// Revoke asks the server to revoke a token (RFC 7009); hint is
// "refresh_token" or "access_token".
func (c *Config) Revoke(ctx context.Context, token, hint string) error {
	if c.Metadata == nil {
		return errNoMetadata
	}
	if c.Metadata.RevocationEndpoint == "" {
		return errors.New("the authorization server offers no revocation endpoint")
	}
	a, err := c.post(ctx, c.Metadata.RevocationEndpoint, url.Values{"token": {token}, "token_type_hint": {hint}})
	if err != nil {
		return err
	}
	return scrub(errorOf(a), token, c.Client.Secret)
}

// tokenResponse is a token endpoint's answer as sent (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
	// ExpiresIn is a number, or from a few servers a numeric string.
	ExpiresIn json.RawMessage `json:"expires_in"`
	Scope     string          `json:"scope"`
	IDToken   string          `json:"id_token"`
}

func (c *Config) token(ctx context.Context, form url.Values) (*Grant, error) {
	if c.Metadata == nil {
		return nil, errNoMetadata
	}
	if c.Resource != "" {
		form.Set("resource", c.Resource)
	}
	a, err := c.post(ctx, c.Metadata.TokenEndpoint, form)
	if err != nil {
		return nil, err
	}
	if err := errorOf(a); err != nil {
		return nil, scrub(err, form.Get("code"), form.Get("code_verifier"), form.Get("refresh_token"), c.Client.Secret)
	}
	var tr tokenResponse
	if err := json.Unmarshal(a.body, &tr); err != nil {
		return nil, fmt.Errorf("the token endpoint's answer is not a token response: %w", err)
	}
	if tr.AccessToken == "" {
		return nil, errors.New("the token endpoint's answer has no access_token")
	}
	g := &Grant{Token: Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken, Scope: tr.Scope}, IDToken: tr.IDToken}
	if secs, err := expiresIn(tr.ExpiresIn); err != nil {
		return nil, err
	} else if secs > 0 {
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		g.ExpiresAt = now().Add(time.Duration(secs) * time.Second)
	}
	return g, nil
}

// expiresIn reads expires_in: absent or null is 0.
func expiresIn(raw json.RawMessage) (int64, error) {
	s := strings.Trim(string(raw), `"`)
	if s == "" || s == "null" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 1<<31 {
		return 0, fmt.Errorf("the token endpoint's expires_in %s is not a number of seconds", printable(string(raw), 20))
	}
	return n, nil
}

// post sends a form to endpoint with the client's credentials.
func (c *Config) post(ctx context.Context, endpoint string, form url.Values) (*answer, error) {
	basic := false
	switch c.authMethod() {
	case AuthBasic:
		basic = true
	case AuthPost:
		form.Set("client_id", c.Client.ID)
		form.Set("client_secret", c.Client.Secret)
	default:
		form.Set("client_id", c.Client.ID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		// RFC 6749 §2.3.1: the ID and secret are form-encoded first.
		req.SetBasicAuth(url.QueryEscape(c.Client.ID), url.QueryEscape(c.Client.Secret))
	}
	return send(noRedirects(c.HTTPClient), req)
}

func (c *Config) authMethod() string {
	switch {
	case c.Client.Secret == "":
		return AuthNone
	case c.Client.AuthMethod == AuthBasic || c.Client.AuthMethod == AuthPost || c.Client.AuthMethod == AuthNone:
		return c.Client.AuthMethod
	}
	var s []string
	if c.Metadata != nil {
		s = c.Metadata.TokenEndpointAuthMethodsSupported
	}
	if slices.Contains(s, AuthBasic) && !slices.Contains(s, AuthPost) {
		return AuthBasic
	}
	return AuthPost
}
