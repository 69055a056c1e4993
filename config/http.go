package config

import (
	"time"
)

// DefaultHTTPSessionTimeout is how long an HTTP session may stay idle
// before mcpx ends it.
const DefaultHTTPSessionTimeout = 30 * time.Minute

// DefaultHTTPBodyMemory is http.maxBodyMemory when the file sets none,
// for a maxMessageBytes of maxMessage: room for four bodies at that limit
// at once (256 MiB at the default 64 MiB), and at least 64 MiB, so that a
// small maxMessageBytes still lets many ordinary bodies in together.
func DefaultHTTPBodyMemory(maxMessage int64) int64 {
	return max(4*maxMessage, minDefaultBodyMemory)
}

// minDefaultBodyMemory is the least default of http.maxBodyMemory.
const minDefaultBodyMemory = 64 << 20

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
	// Keys are the named API keys (http.keys), each let in besides the
	// token and limited to its profile.
	Keys []APIKey
	// OAuth, when set, lets in OAuth 2.1 access tokens (http.oauth).
	OAuth *OAuth
	// SessionTimeout ends a session that has had no request and no open
	// stream for that long; zero means DefaultHTTPSessionTimeout (30m).
	SessionTimeout time.Duration
	// MaxBodyMemory bounds the memory that the bodies of all the requests
	// being read or handled share; past it a request is refused with 503
	// and Retry-After. At least MaxMessageBytes; zero means
	// DefaultHTTPBodyMemory(MaxMessageBytes).
	MaxBodyMemory int64
	// UI serves the dashboard at /ui (http.ui); nil means on. Use
	// [HTTP.UIOn] to read it.
	UI *bool
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
	if n, ok := r.size("maxBodyMemory", minMessageBytes); ok {
		// Read after maxMessageBytes (topLimits), which it must hold.
		if n < p.cfg.MaxMessageBytes {
			r.fail("maxBodyMemory", "%d bytes is less than maxMessageBytes (%d): a body at that limit could never be read", n, p.cfg.MaxMessageBytes)
		} else {
			h.MaxBodyMemory = n
		}
	}
	if on, ok := r.boolean("ui"); ok {
		h.UI = &on
	}
	p.apiKeys(r)
	p.oauth(r)
	r.warnUnknown("allowedHosts", "allowedOrigins", "token", "sessionTimeout", "maxBodyMemory", "keys", "oauth", "ui")
	if r.err != nil {
		p.errs = append(p.errs, r.err)
		return
	}
	if h.Problem = r.unset.String(); h.Problem != "" {
		// Only serve --http uses the section: the rest of mcpx runs.
		p.warn("", "http", h.Problem+": serve --http refuses to start until it is set")
	}
}

// UIOn reports whether serve --http serves the dashboard at /ui: unless
// the file says http.ui: false.
func (h HTTP) UIOn() bool { return h.UI == nil || *h.UI }
