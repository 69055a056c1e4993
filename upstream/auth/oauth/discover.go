package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// protocolVersion is the MCP revision whose authorization this package
// follows, sent to the MCP server with the metadata request (discovery
// comes before the initialize handshake that would agree on one).
const protocolVersion = "2025-11-25"

// ResourceMetadata is a protected resource's metadata (RFC 9728 §2), the
// fields mcpx uses.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// Metadata is an authorization server's metadata (RFC 8414 §2, or OpenID
// Connect Discovery), the fields mcpx uses.
type Metadata struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	RegistrationEndpoint  string `json:"registration_endpoint,omitempty"`
	RevocationEndpoint    string `json:"revocation_endpoint,omitempty"`
	// JWKSURI is where the server's signing keys are (RFC 7517 JWK Set):
	// what a resource server checks the JWTs it issues with.
	JWKSURI                           string   `json:"jwks_uri,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	// ClientIDMetadataDocumentSupported says the server takes a client ID
	// that is the URL of a client ID metadata document (MCP authorization
	// 2025-11-25).
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
	// IssParameterSupported says the server puts its issuer in every
	// authorization response (RFC 9207 §3): one without iss is refused.
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
}

// Discovery is what [Discover] found.
type Discovery struct {
	// Resource is the resource indicator (RFC 8707) to send: the resource
	// metadata's resource, else the protected resource's URL.
	Resource string
	// ScopesSupported are the scopes the resource metadata lists: what
	// to ask for when the server's challenge names none (MCP's scope
	// selection).
	ScopesSupported []string
	// Metadata is the authorization server's.
	Metadata *Metadata
}

// Discover finds the authorization server of the protected resource at
// resourceURL and reads its metadata.
//
// The resource's metadata (RFC 9728) comes from metadataURL, the
// resource_metadata of the resource's 401 challenge, which the caller has
// checked is on the resource's own origin; with none, from the
// well-known URLs, path-aware first: for https://h/mcp,
// https://h/.well-known/oauth-protected-resource/mcp then
// https://h/.well-known/oauth-protected-resource. Its first
// authorization server is the one used, and its declared resource must be
// resourceURL or a path prefix of it (RFC 9728 §3.3): else a server could
// have tokens minted for another one.
//
// The authorization server's metadata comes from RFC 8414's well-known URL
// (path-aware), then OpenID Connect Discovery's two; its issuer must be
// the one asked for (RFC 8414 §3.3).
//
// A resource without metadata (or whose metadata names no authorization
// server) is served as MCP 2025-03-26 did: its origin is the authorization
// server. An authorization server without metadata gets the default
// endpoints /authorize, /token and /register at its origin.
func Discover(ctx context.Context, hc *http.Client, resourceURL, metadataURL string) (*Discovery, error) {
	res, err := absolute(resourceURL)
	if err != nil {
		return nil, fmt.Errorf("the resource's URL %q: %w", resourceURL, err)
	}
	var prm *ResourceMetadata
	if metadataURL != "" {
		if prm, err = resourceMetadata(ctx, hc, metadataURL, resourceURL); err != nil {
			return nil, err
		}
		if prm == nil {
			return nil, fmt.Errorf("no protected resource metadata at %s, which the server's 401 names", metadataURL)
		}
	} else {
		for _, u := range resourceMetadataURLs(res) {
			if prm, err = resourceMetadata(ctx, hc, u, resourceURL); err != nil || prm != nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
	}

	d := &Discovery{Resource: resourceURL}
	issuer := res.Scheme + "://" + res.Host
	if prm != nil {
		if prm.Resource != "" {
			d.Resource = prm.Resource
		}
		d.ScopesSupported = prm.ScopesSupported
		if len(prm.AuthorizationServers) > 0 {
			issuer = prm.AuthorizationServers[0]
		}
	}
	if d.Metadata, err = serverMetadata(ctx, hc, issuer); err != nil {
		return nil, err
	}
	return d, nil
}

// resourceMetadataURLs are where a resource's metadata may be (RFC 9728
// §3.1, path-aware first, as MCP asks).
func resourceMetadataURLs(res *url.URL) []string {
	root := res.Scheme + "://" + res.Host
	path := strings.TrimSuffix(res.EscapedPath(), "/")
	if path == "" {
		return []string{root + "/.well-known/oauth-protected-resource"}
	}
	return []string{root + "/.well-known/oauth-protected-resource" + path, root + "/.well-known/oauth-protected-resource"}
}

// resourceMetadata reads the resource metadata at u: nil (and no error)
// when there is none there, an error when it names another resource.
func resourceMetadata(ctx context.Context, hc *http.Client, u, resourceURL string) (*ResourceMetadata, error) {
	var m ResourceMetadata
	found, err := getJSON(ctx, hc, u, true, &m)
	if err != nil || !found {
		return nil, err
	}
	if m.Resource != "" && !resourceCovers(m.Resource, resourceURL) {
		return nil, fmt.Errorf("the protected resource metadata at %s is for %q, not %q: refused", u, m.Resource, resourceURL)
	}
	for _, as := range m.AuthorizationServers {
		if _, err := absolute(as); err != nil {
			return nil, fmt.Errorf("the protected resource metadata at %s names authorization server %q: %w", u, as, err)
		}
	}
	return &m, nil
}

// serverMetadataURLs are where an issuer's metadata may be: RFC 8414 §3.1
// (the well-known segment before the issuer's path), then OpenID Connect
// Discovery with the segment before and after the path, in the order MCP
// gives.
func serverMetadataURLs(issuer *url.URL) []string {
	root := issuer.Scheme + "://" + issuer.Host
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if path == "" {
		return []string{root + "/.well-known/oauth-authorization-server", root + "/.well-known/openid-configuration"}
	}
	return []string{
		root + "/.well-known/oauth-authorization-server" + path,
		root + "/.well-known/openid-configuration" + path,
		root + path + "/.well-known/openid-configuration",
	}
}

// ServerMetadata reads the metadata of the authorization server issuer
// (RFC 8414, then OpenID Connect Discovery); its issuer must be the one
// asked for. With none at any well-known URL, it gives the default
// endpoints, and no JWKSURI.
func ServerMetadata(ctx context.Context, hc *http.Client, issuer string) (*Metadata, error) {
	return serverMetadata(ctx, hc, issuer)
}

// serverMetadata reads the metadata of the authorization server issuer;
// with none at any well-known URL, its default endpoints.
func serverMetadata(ctx context.Context, hc *http.Client, issuer string) (*Metadata, error) {
	iu, err := absolute(issuer)
	if err != nil {
		return nil, fmt.Errorf("the authorization server %q: %w", issuer, err)
	}
	for _, u := range serverMetadataURLs(iu) {
		var m Metadata
		found, err := getJSON(ctx, hc, u, false, &m)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		// Only a final slash may differ, as both spellings name one server.
		if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("the authorization server metadata at %s is for issuer %q, not %q: refused", u, m.Issuer, issuer)
		}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("the authorization server metadata at %s: %w", u, err)
		}
		return &m, nil
	}
	root := iu.Scheme + "://" + iu.Host
	return &Metadata{
		Issuer:                root,
		AuthorizationEndpoint: root + "/authorize",
		TokenEndpoint:         root + "/token",
		RegistrationEndpoint:  root + "/register",
	}, nil
}

// check refuses metadata without the endpoints the code flow needs, and
// endpoints that are not http(s) URLs: the authorization endpoint goes to
// a browser, where a javascript: URL would run.
func (m *Metadata) check() error {
	for _, f := range []struct {
		name, value string
		required    bool
	}{
		{"authorization_endpoint", m.AuthorizationEndpoint, true},
		{"token_endpoint", m.TokenEndpoint, true},
		{"registration_endpoint", m.RegistrationEndpoint, false},
		{"revocation_endpoint", m.RevocationEndpoint, false},
	} {
		if f.value == "" && !f.required {
			continue
		}
		if _, err := absolute(f.value); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// getJSON reads the JSON document at u into v. found is false, with no
// error, when there is no document there: any status but 200, or (for
// well-known URLs, where a site may answer every path with a page) a body
// that is not JSON. A body over 1 MiB is an error.
func getJSON(ctx context.Context, hc *http.Client, u string, toResource bool, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	if toResource {
		req.Header.Set("MCP-Protocol-Version", protocolVersion)
	}
	a, err := send(hc, req)
	if err != nil {
		return false, err // names u
	}
	if a.status != http.StatusOK {
		return false, nil
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		return false, nil
	}
	return true, nil
}

// absolute parses an http or https URL with a host.
func absolute(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("not an absolute http(s) URL")
	}
	return u, nil
}

// resourceCovers reports whether a resource identifier covers the URL a
// client addressed: same scheme, host, query and fragment, and a path
// equal to the URL's or a prefix of it at a segment boundary (a server at
// https://h/mcp may declare https://h), a final slash ignored.
func resourceCovers(resource, addressed string) bool {
	r, err1 := url.Parse(resource)
	a, err2 := url.Parse(addressed)
	if err1 != nil || err2 != nil {
		return false
	}
	if !strings.EqualFold(r.Scheme, a.Scheme) || !strings.EqualFold(r.Host, a.Host) ||
		r.RawQuery != a.RawQuery || r.Fragment != a.Fragment || r.User.String() != a.User.String() {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	ap := strings.TrimSuffix(a.EscapedPath(), "/")
	return rp == ap || strings.HasPrefix(ap, rp+"/")
}
