package httpserve

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// guard applies the DNS-rebinding checks (Host, Origin) and the
// credentials (the token, or a named API key: credentials.go), in that
// order, before any MCP handling; then the body gate (body.go) reads the
// body, so that no request that fails them costs the memory of its body.
func (h *httpHandler) guard(next http.Handler) http.Handler {
	next = h.bounded(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.rebindingChecked(w, r) {
			return
		}
		r, ok := h.admit(w, r)
		if !ok {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// rebindingChecked applies the DNS-rebinding checks: a request whose
// Host or Origin is not allowed is answered 403 and it reports false.
func (h *httpHandler) rebindingChecked(w http.ResponseWriter, r *http.Request) bool {
	if h.refuseHost(w, r) {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin, r.Host) {
		http.Error(w, "forbidden: Origin "+quote(origin)+" is not allowed (http.allowedOrigins)", http.StatusForbidden)
		return false
	}
	return true
}

// hostChecked applies the Host check alone, for what is public: the
// resource metadata a client reads before it has credentials.
func (h *httpHandler) hostChecked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.refuseHost(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseHost answers 403 to a request whose Host is not allowed.
func (h *httpHandler) refuseHost(w http.ResponseWriter, r *http.Request) bool {
	if h.hostAllowed(r.Host) {
		return false
	}
	http.Error(w, "forbidden: Host "+quote(r.Host)+" is not allowed (http.allowedHosts)", http.StatusForbidden)
	return true
}

// hostAllowed accepts the bound address's own name, the loopback names
// when bound to loopback, and http.allowedHosts. Bound to a non-loopback
// address with no allowedHosts, any Host passes: the token guards it, and
// a reverse proxy's public name is not known here.
func (h *httpHandler) hostAllowed(hostport string) bool {
	name := hostport
	if hn, _, err := net.SplitHostPort(hostport); err == nil {
		name = hn
	}
	name = strings.Trim(strings.ToLower(name), "[]")
	if slices.ContainsFunc(h.o.AllowedHosts, func(s string) bool { return strings.EqualFold(s, name) || s == "*" }) {
		return true
	}
	if name == strings.Trim(strings.ToLower(h.host), "[]") && name != "" && name != "0.0.0.0" && name != "::" {
		return true
	}
	if h.loopback {
		return isLoopback(name)
	}
	return len(h.o.AllowedHosts) == 0
}

// originAllowed accepts http.allowedOrigins ("*" for any) and a page of
// the server itself (same scheme-less host and port as the request).
func (h *httpHandler) originAllowed(origin, host string) bool {
	for _, o := range h.o.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

// isLoopback reports whether a host names the loopback interface.
func isLoopback(host string) bool {
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
