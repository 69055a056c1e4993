package oauth

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// asMetadata is an authorization server's metadata document for issuer.
func asMetadata(issuer string) map[string]any {
	return map[string]any{
		"issuer":                           issuer,
		"authorization_endpoint":           issuer + "/authorize",
		"token_endpoint":                   issuer + "/token",
		"code_challenge_methods_supported": []string{"S256"},
	}
}

const (
	prmPath  = "/.well-known/oauth-protected-resource/mcp"
	prmRoot  = "/.well-known/oauth-protected-resource"
	oasRoot  = "/.well-known/oauth-authorization-server"
	oidcRoot = "/.well-known/openid-configuration"
)

// discover discovers for the MCP server at the site's /mcp, with the
// 401's resource_metadata at metadataPath of the site ("" for none).
func discover(s *site, metadataPath string) (*Discovery, error) {
	metadataURL := ""
	if metadataPath != "" {
		metadataURL = s.URL + metadataPath
	}
	return Discover(context.Background(), s.Client(), s.URL+"/mcp", metadataURL)
}

// TestDiscoverOrder: which documents discovery asks for, in which order,
// and what it makes of them. The MCP server is at /mcp of the site.
func TestDiscoverOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		// routes get the site's URL.
		routes      func(u string) map[string]http.HandlerFunc
		metadataURL string // a path on the site, from the 401; "" for none
		asked       []string
		issuer      string // a path on the site
		resource    string // a path on the site
	}{{
		name: "path-aware resource metadata first, then RFC 8414",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{
				prmPath: jsonDoc(map[string]any{"resource": u + "/mcp", "authorization_servers": []string{u}}),
				oasRoot: jsonDoc(asMetadata(u)),
			}
		},
		asked:  []string{prmPath, oasRoot},
		issuer: "", resource: "/mcp",
	}, {
		name: "the 401's resource_metadata, not the well-known URLs",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{
				"/meta/prm": jsonDoc(map[string]any{"resource": u + "/mcp", "authorization_servers": []string{u}}),
				oasRoot:     jsonDoc(asMetadata(u)),
			}
		},
		metadataURL: "/meta/prm",
		asked:       []string{"/meta/prm", oasRoot},
		issuer:      "", resource: "/mcp",
	}, {
		name: "root resource metadata naming the origin; an issuer with a path, found by OpenID discovery appended",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{
				prmRoot: jsonDoc(map[string]any{"resource": u, "authorization_servers": []string{u + "/tenant"}}),
				"/tenant/.well-known/openid-configuration": jsonDoc(asMetadata(u + "/tenant")),
			}
		},
		asked:  []string{prmPath, prmRoot, oasRoot + "/tenant", oidcRoot + "/tenant", "/tenant/.well-known/openid-configuration"},
		issuer: "/tenant", resource: "",
	}, {
		name: "OpenID discovery with the path inserted comes before appended",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{
				prmPath:                 jsonDoc(map[string]any{"authorization_servers": []string{u + "/tenant"}}),
				oidcRoot + "/tenant":    jsonDoc(asMetadata(u + "/tenant")),
				"/tenant" + oidcRoot:    jsonDoc(map[string]any{"issuer": "never asked"}),
				oasRoot + "/tenant/x/y": jsonDoc(map[string]any{"issuer": "never asked"}),
			}
		},
		asked:  []string{prmPath, oasRoot + "/tenant", oidcRoot + "/tenant"},
		issuer: "/tenant", resource: "/mcp", // no resource declared: the server's URL
	}, {
		name: "a page for every path is no metadata; without any, the origin is the authorization server (MCP 2025-03-26)",
		routes: func(u string) map[string]http.HandlerFunc {
			page := func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<!doctype html><p>hello")) }
			return map[string]http.HandlerFunc{
				prmPath:  page,
				prmRoot:  page,
				oasRoot:  page,
				oidcRoot: jsonDoc(asMetadata(u)),
			}
		},
		asked:  []string{prmPath, prmRoot, oasRoot, oidcRoot},
		issuer: "", resource: "/mcp",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, tc.routes)
			d, err := discover(s, tc.metadataURL)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.paths(); !slices.Equal(got, tc.asked) {
				t.Errorf("asked for\n  %q\nwant\n  %q", got, tc.asked)
			}
			if d.Metadata.Issuer != s.URL+tc.issuer || d.Metadata.TokenEndpoint != s.URL+tc.issuer+"/token" {
				t.Errorf("metadata = %+v, want issuer %s", d.Metadata, s.URL+tc.issuer)
			}
			if d.Resource != s.URL+tc.resource {
				t.Errorf("resource = %q, want %q", d.Resource, s.URL+tc.resource)
			}
		})
	}
}

// TestDiscoverRefuses: metadata that would send mcpx, its tokens or the
// user's browser somewhere else is refused, and so is one too big.
func TestDiscoverRefuses(t *testing.T) {
	prm := func(resource string, servers ...string) http.HandlerFunc {
		return jsonDoc(map[string]any{"resource": resource, "authorization_servers": servers})
	}
	for _, tc := range []struct {
		name        string
		routes      func(u string) map[string]http.HandlerFunc
		metadataURL string
		want        string // in the error
		wantErr     error
		asked       []string // nil: not checked
	}{{
		name: "the 401's resource_metadata is missing: no fallback to the well-known URLs",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prmPath: prm(u+"/mcp", u)}
		},
		metadataURL: "/meta/prm",
		want:        "no protected resource metadata at",
		asked:       []string{"/meta/prm"},
	}, {
		name: "issuer mismatch",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prmPath: prm(u+"/mcp", u), oasRoot: jsonDoc(asMetadata("https://as.evil.example"))}
		},
		want:  `is for issuer "https://as.evil.example"`,
		asked: []string{prmPath, oasRoot},
	}, {
		name: "resource metadata for another server",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prmPath: prm("https://victim.example/mcp", u)}
		},
		want: `is for "https://victim.example/mcp"`,
	}, {
		name: "resource metadata from the 401 for another path of the same host",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/meta/prm": prm(u+"/mc", u)}
		},
		metadataURL: "/meta/prm",
		want:        "/mc\", not",
	}, {
		name: "an authorization endpoint that is not an http(s) URL",
		routes: func(u string) map[string]http.HandlerFunc {
			md := asMetadata(u)
			md["authorization_endpoint"] = "javascript:alert(1)"
			return map[string]http.HandlerFunc{prmPath: prm(u+"/mcp", u), oasRoot: jsonDoc(md)}
		},
		want: "authorization_endpoint: not an absolute http(s) URL",
	}, {
		name: "metadata without a token endpoint",
		routes: func(u string) map[string]http.HandlerFunc {
			md := asMetadata(u)
			delete(md, "token_endpoint")
			return map[string]http.HandlerFunc{prmPath: prm(u+"/mcp", u), oasRoot: jsonDoc(md)}
		},
		want: "token_endpoint: not an absolute http(s) URL",
	}, {
		name: "an authorization server that is not a URL",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prmPath: prm(u+"/mcp", "as.example")}
		},
		want: `names authorization server "as.example"`,
	}, {
		name: "resource metadata over 1 MiB",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prmPath: func(w http.ResponseWriter, _ *http.Request) {
				w.Write([]byte(`{"resource":"` + strings.Repeat("x", 1<<20) + `"}`))
			}}
		},
		wantErr: ErrTooLarge,
	}, {
		name: "authorization server metadata over 1 MiB",
		routes: func(u string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prmPath: prm(u+"/mcp", u), oasRoot: func(w http.ResponseWriter, _ *http.Request) {
				for range 1 << 11 { // endless in spirit: 2 MiB
					w.Write([]byte(strings.Repeat(" ", 1<<10)))
				}
			}}
		},
		wantErr: ErrTooLarge,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, tc.routes)
			d, err := discover(s, tc.metadataURL)
			if err == nil {
				t.Fatalf("discovery found %+v, want an error", d.Metadata)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if got := s.paths(); tc.asked != nil && !slices.Equal(got, tc.asked) {
				t.Errorf("asked for %q, want %q", got, tc.asked)
			}
		})
	}
}

// TestDiscoverDefaultEndpoints: an authorization server without metadata
// gets the default endpoints at its origin, as MCP 2025-03-26 gave them.
func TestDiscoverDefaultEndpoints(t *testing.T) {
	s := newSite(t, func(string) map[string]http.HandlerFunc { return nil })
	d, err := discover(s, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{prmPath, prmRoot, oasRoot, oidcRoot}; !slices.Equal(s.paths(), want) {
		t.Errorf("asked for %q, want %q", s.paths(), want)
	}
	if m := d.Metadata; m.AuthorizationEndpoint != s.URL+"/authorize" || m.TokenEndpoint != s.URL+"/token" || m.RegistrationEndpoint != s.URL+"/register" {
		t.Errorf("metadata = %+v", m)
	}
	if d.Resource != s.URL+"/mcp" {
		t.Errorf("resource = %q, want the server's URL", d.Resource)
	}
}

// TestResourceCovers: which declared resources bind to https://h/mcp.
func TestResourceCovers(t *testing.T) {
	for res, want := range map[string]bool{
		"https://h/mcp":      true,
		"https://h/mcp/":     true,
		"HTTPS://H/mcp":      true,
		"https://h":          true,
		"https://h/":         true,
		"https://h/mc":       false,
		"https://h/mcp/sub":  false,
		"https://h/mcp?x=1":  false,
		"http://h/mcp":       false,
		"https://h:8443/mcp": false,
		"https://other/mcp":  false,
		"":                   false,
	} {
		if got := resourceCovers(res, "https://h/mcp"); got != want {
			t.Errorf("resourceCovers(%q) = %v, want %v", res, got, want)
		}
	}
}
