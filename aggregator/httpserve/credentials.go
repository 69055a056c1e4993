package httpserve

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/principal"
)

// admit checks a request's credentials: the token, or one of the named
// API keys in force (Options.Keys, read at each request, so that a key
// removed from the config is refused from the next one). It answers 401
// or 403 and reports false for a request it refuses; else it returns the
// request carrying its principal (principal.With), limited to the key's
// profile when it has one (limit).
func (h *httpHandler) admit(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	var keys []config.APIKey
	if h.o.Keys != nil {
		keys = h.o.Keys()
	}
	if h.o.Token == "" && len(keys) == 0 && h.loopback {
		return r, true // a loopback listener with no credentials set
	}
	got, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sum := sha256.Sum256([]byte(got))
	if bearer && h.o.Token != "" && subtle.ConstantTimeCompare(sum[:], h.token[:]) == 1 {
		return r, true
	}
	var key *config.APIKey
	for i := range keys {
		// Every key is compared, so that the time taken does not say
		// which one came close.
		if subtle.ConstantTimeCompare(sum[:], keys[i].Hash[:]) == 1 && bearer {
			key = &keys[i]
		}
	}
	if key == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpx"`)
		httpError(w, http.StatusUnauthorized, mcp.INVALID_REQUEST, "unauthorized: a valid bearer token is required: the token or a named API key")
		return nil, false
	}
	r = r.WithContext(principal.With(r.Context(), key.Name))
	if key.Profile == "" {
		return r, true
	}
	return limit(w, r, key)
}

// limit addresses a request with a key bound to a profile to that
// profile: /mcp and /sse become /mcp/P and /sse/P, another profile's
// path is refused, the terminal API is limited to it
// (principal.WithProfile), and what is the whole server's (the metrics)
// is refused.
func limit(w http.ResponseWriter, r *http.Request, key *config.APIKey) (*http.Request, bool) {
	path := r.URL.Path
	switch {
	case path == "/mcp" || path == "/sse":
		path += "/" + key.Profile
	case strings.HasPrefix(path, "/mcp/") || strings.HasPrefix(path, "/sse/") && path != "/sse/messages":
		if profileOf(r) != key.Profile {
			httpError(w, http.StatusForbidden, mcp.INVALID_REQUEST, "forbidden: key "+key.Name+" sees profile "+key.Profile+" only (at /mcp or /mcp/"+key.Profile+")")
			return nil, false
		}
	case path == "/messages" || path == "/sse/messages":
		// A session's: the session was opened under the key's profile,
		// and only the key that opened it may use it (sse.go).
	case strings.HasPrefix(path, "/mcpx/v1/"):
		// The terminal API shows the key's profile alone (the
		// aggregator's API reads it from the context).
		r = r.WithContext(principal.WithProfile(r.Context(), key.Profile))
	default:
		httpError(w, http.StatusForbidden, mcp.INVALID_REQUEST, "forbidden: key "+key.Name+" sees profile "+key.Profile+" only; "+path+" needs the token or a key without a profile")
		return nil, false
	}
	if path != r.URL.Path {
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = path, ""
		r = r2
	}
	return r, true
}
