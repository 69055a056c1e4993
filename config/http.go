package config

import (
	"time"
)

// DefaultHTTPSessionTimeout is how long an HTTP session may stay idle
// before mcpx ends it.
const DefaultHTTPSessionTimeout = 30 * time.Minute

// HTTP is the http section: how `mcpx serve --http` guards its listener.
type HTTP struct {
	// AllowedHosts are Host header values (a name or IP, without port)
	// accepted besides the bound loopback names; empty means only those.
	AllowedHosts []string
	// AllowedOrigins are the Origin header values (scheme://host[:port])
	// accepted from browsers; "*" accepts any. Empty means a request that
	// carries an Origin is refused unless it is the server's own.
	AllowedOrigins []string
	// Token is the bearer token clients must present; "" means none
	// (allowed only on a loopback address). ${VAR} expands in it.
	Token string
	// SessionTimeout ends a session that has had no request and no open
	// stream for that long; zero means DefaultHTTPSessionTimeout (30m).
	SessionTimeout time.Duration
	// Problem says why serve --http must not start although the file
	// loaded: a ${VAR} the section uses is not set ("TOKEN is not set
	// (http.token)"). Empty when there is none.
	Problem string
}

// http reads the optional http section.
func (p *parser) http(tree map[string]any) {
	v, ok := tree["http"]
	if !ok || v == nil {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.fail("", "http", "want an object, not "+kind(v))
		return
	}
	r := &reader{p: p, prefix: "http.", m: m, unset: &unsetVars{}}
	h := &p.cfg.HTTP
	h.AllowedHosts = r.list("allowedHosts", true)
	h.AllowedOrigins = r.list("allowedOrigins", true)
	h.Token, _, _ = r.expanded("token")
	if d, ok := r.duration("sessionTimeout", false); ok {
		h.SessionTimeout = d
	}
	r.warnUnknown("allowedHosts", "allowedOrigins", "token", "sessionTimeout")
	if r.err != nil {
		p.errs = append(p.errs, r.err)
		return
	}
	if h.Problem = r.unset.String(); h.Problem != "" {
		// Only serve --http uses the section: the rest of mcpx runs.
		p.warn("", "http", h.Problem+": serve --http refuses to start until it is set")
	}
}
