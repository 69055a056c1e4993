package accesstoken

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// MetadataPath is where the resource's metadata is served (RFC 9728
// §3.1): followed by the resource's path, /mcp for https://h/mcp.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Resource is a protected resource as a request reached it: its
// identifier (the URL a token is asked for) and its metadata's URL.
type Resource struct {
	ID, MetadataURL string
	// Base is the identifier of /mcp, which a token for the whole server
	// is asked for; ID when the request is to /mcp itself.
	Base string
}

// ResourceOf is the resource a request to path is addressed to: /mcp
// (and /sse, /messages, the terminal API: the whole server), or /mcp/NAME
// and /sse/NAME, a profile's. Its origin is http.oauth.resource's, else
// the request's (its Host, which the Host check has let in).
func (c *Checker) ResourceOf(r *http.Request, path string) Resource {
	origin, basePath := c.base(r)
	base := origin + basePath
	id := base
	for _, p := range []string{"/mcp/", "/sse/"} {
		if name, ok := strings.CutPrefix(path, p); ok && name != "" && name != "messages" && !strings.Contains(name, "/") {
			id = base + "/" + name
		}
	}
	u, _ := url.Parse(id)
	return Resource{ID: id, Base: base, MetadataURL: origin + MetadataPath + u.EscapedPath()}
}

// base is the origin and path of /mcp's resource identifier.
func (c *Checker) base(r *http.Request) (origin, path string) {
	if c.cfg.Resource != "" {
		if u, err := url.Parse(c.cfg.Resource); err == nil {
			return u.Scheme + "://" + u.Host, strings.TrimSuffix(u.EscapedPath(), "/")
		}
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host, "/mcp"
}

// Audiences are the aud values a token for res may carry: a token for the
// whole server is good at a profile's path too.
func (res Resource) Audiences() []string {
	if res.ID == res.Base {
		return []string{res.ID}
	}
	return []string{res.ID, res.Base}
}

// ServeMetadata answers a GET of the resource metadata at
// MetadataPath+suffix: suffix "" or /mcp for the whole server, /mcp/NAME
// for profile NAME when hasProfile says it exists; anything else is 404.
func (c *Checker) ServeMetadata(w http.ResponseWriter, r *http.Request, hasProfile func(string) bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	_, basePath := c.base(r)
	suffix := strings.TrimPrefix(r.URL.Path, MetadataPath)
	var res Resource
	switch name, ok := strings.CutPrefix(suffix, basePath+"/"); {
	case suffix == "" || suffix == "/" || suffix == basePath:
		res = c.ResourceOf(r, "/mcp")
	case ok && name != "" && !strings.Contains(name, "/") && hasProfile(name):
		res = c.ResourceOf(r, "/mcp/"+name)
	default:
		http.NotFound(w, r)
		return
	}
	doc := map[string]any{
		"resource":                 res.ID,
		"authorization_servers":    []string{c.cfg.Issuer},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "mcpx",
	}
	if s := c.ScopesSupported(); len(s) > 0 {
		doc["scopes_supported"] = s
	}
	w.Header().Set("Content-Type", "application/json")
	// A public document: a client running in a browser may read it.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	json.NewEncoder(w).Encode(doc)
}

// Challenge is the WWW-Authenticate value of a refusal at res (RFC 6750
// §3, RFC 9728 §5.1): e is nil when the request carried no token.
func (c *Checker) Challenge(res Resource, e *Error) string {
	parts := []string{`Bearer resource_metadata=` + quoted(res.MetadataURL)}
	scope := strings.Join(c.cfg.Scopes, " ")
	if e != nil {
		parts = append(parts, "error="+quoted(e.Code), "error_description="+quoted(e.Description))
		if e.Scope != "" {
			scope = e.Scope
		}
	}
	if scope != "" {
		parts = append(parts, "scope="+quoted(scope))
	}
	return strings.Join(parts, ", ")
}

// quoted is s as an RFC 7230 quoted-string: printable ASCII, with " and \
// escaped; anything else (a claim's text may hold it) becomes '?'.
func quoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
