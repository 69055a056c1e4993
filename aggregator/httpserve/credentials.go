package httpserve

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/mcpx/mcpx/aggregator/httpserve/accesstoken"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/jsonrpc"
)

// admit checks a request's credentials: the token, one of the named API
// keys in force (Options.Keys, read at each request, so that a key
// removed from the config is refused from the next one), or an OAuth
// access token (Options.OAuth). It answers 401 or 403 and reports false
// for a request it refuses; else it returns the request carrying its
// principal (principal.With), limited to the key's or token's profile
// when it has one (limit).
func (h *httpHandler) admit(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	var keys []config.APIKey
	if h.o.Keys != nil {
		keys = h.o.Keys()
	}
	var rs *accesstoken.Checker
	if h.o.OAuth != nil {
		rs = h.o.OAuth()
	}
	if h.o.Token == "" && len(keys) == 0 && rs == nil && h.loopback {
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
	if key != nil {
		return h.enter(w, r, key.Name, key.Profile, "key "+key.Name)
	}
	if rs != nil {
		return h.admitToken(w, r, rs, got, bearer)
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mcpx"`)
	httpError(w, http.StatusUnauthorized, jsonrpc.CodeInvalidRequest, "unauthorized: a valid bearer token is required: the token or a named API key")
	return nil, false
}

// admitToken checks an OAuth access token (accesstoken.Checker); a
// request without one, or with one refused, gets the challenge that
// names the resource's metadata, so that a client can find where to get
// one (MCP authorization, RFC 9728 §5.1).
func (h *httpHandler) admitToken(w http.ResponseWriter, r *http.Request, rs *accesstoken.Checker, raw string, bearer bool) (*http.Request, bool) {
	res := rs.ResourceOf(r, r.URL.Path)
	if !bearer || raw == "" {
		w.Header().Set("WWW-Authenticate", rs.Challenge(res, nil))
		httpError(w, http.StatusUnauthorized, jsonrpc.CodeInvalidRequest, "unauthorized: a bearer token is required: an access token from "+rs.Config().Issuer+" (see "+res.MetadataURL+"), the token or a named API key")
		return nil, false
	}
	tok, err := rs.Check(r.Context(), raw, res.Audiences()...)
	if err != nil {
		e := accesstoken.AsError(err)
		if e == nil { // the request ended while the issuer's keys were fetched
			httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "the access token could not be checked: "+err.Error())
			return nil, false
		}
		w.Header().Set("WWW-Authenticate", rs.Challenge(res, e))
		h.o.Logger.Debug("access token refused", "error", e.Error())
		httpError(w, e.Status(), jsonrpc.CodeInvalidRequest, "access token refused: "+e.Description)
		return nil, false
	}
	return h.enter(w, r, tok.Principal, tok.Profile, "token of "+tok.Principal)
}

// enter lets a request in as principal who, limited to profile ("": the
// whole catalog); what names the credential in a refusal.
func (h *httpHandler) enter(w http.ResponseWriter, r *http.Request, who, profile, what string) (*http.Request, bool) {
	r = r.WithContext(principal.With(r.Context(), who))
	if profile == "" {
		return r, true
	}
	return limit(w, r, profile, what)
}

// limit addresses a request with a key bound to a profile to that
// profile: /mcp and /sse become /mcp/P and /sse/P, another profile's
// path is refused, the terminal API is limited to it
// (principal.WithProfile), and what is the whole server's (the metrics)
// is refused.
func limit(w http.ResponseWriter, r *http.Request, profile, what string) (*http.Request, bool) {
	path := r.URL.Path
	switch {
	case path == "/mcp" || path == "/sse":
		path += "/" + profile
	case strings.HasPrefix(path, "/mcp/") || strings.HasPrefix(path, "/sse/") && path != "/sse/messages":
		if profileOf(r) != profile {
			httpError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "forbidden: "+what+" sees profile "+profile+" only (at /mcp or /mcp/"+profile+")")
			return nil, false
		}
	case path == "/messages" || path == "/sse/messages":
		// A session's: the session was opened under the key's profile,
		// and only the key that opened it may use it (sse.go).
	case strings.HasPrefix(path, "/mcpx/v1/") || path == "/ui" || strings.HasPrefix(path, "/ui/"):
		// The terminal API and the dashboard show the key's profile
		// alone (they read it from the context).
		r = r.WithContext(principal.WithProfile(r.Context(), profile))
	default:
		httpError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "forbidden: "+what+" sees profile "+profile+" only; "+path+" needs the token or a credential without a profile")
		return nil, false
	}
	if path != r.URL.Path {
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = path, ""
		r = r2
	}
	return r, true
}

// resourceMetadata serves the protected resource's metadata (RFC 9728)
// when http.oauth is set; a public document, as a client reads it before
// it has a token.
func (h *httpHandler) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	var rs *accesstoken.Checker
	if h.o.OAuth != nil {
		rs = h.o.OAuth()
	}
	if rs == nil {
		http.NotFound(w, r)
		return
	}
	rs.ServeMetadata(w, r, func(name string) bool { ok, _ := h.c.HasProfile(name); return ok })
}
