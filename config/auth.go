package config

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Auth is a remote server's OAuth settings ("auth" in its entry). A server
// without one still logs in when it asks to (an HTTP 401), with dynamic
// client registration and the scopes the server names.
type Auth struct {
	// Disabled is "auth": false: the server is never sent into a login; a
	// 401 from it is an ordinary failure.
	Disabled bool
	// ClientID is a client registered beforehand with the authorization
	// server; "" means dynamic client registration. An https URL here is
	// a client ID metadata document, for servers that accept those.
	ClientID string
	// ClientSecret goes with ClientID for a confidential client; it must be
	// written as a ${VAR} reference, never as the secret itself.
	ClientSecret string
	// Scopes are asked for in addition to those the server names.
	Scopes []string
	// RedirectPort fixes the loopback redirect listener's port, for
	// registrations that allow only one redirect URI; 0 picks a free port.
	RedirectPort int
}

var authKeys = []string{"clientId", "clientSecret", "scopes", "redirectPort"}

// auth reads "auth": false, true, or an object of [Auth] fields.
func (r *reader) auth(key string) *Auth {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case bool:
		return &Auth{Disabled: !v}
	case map[string]any:
		sub := &reader{p: r.p, server: r.server, prefix: r.prefix + key + ".", m: v, unset: r.unset}
		a := &Auth{}
		a.ClientID, _, _ = sub.expanded("clientId")
		if raw, ok := sub.str("clientSecret"); ok {
			if !strings.Contains(raw, "${") {
				sub.fail("clientSecret", "write it as a ${VAR} reference: the config file must not hold the secret itself")
			}
			a.ClientSecret, _ = sub.expand("clientSecret", raw)
			if a.ClientID == "" && sub.err == nil {
				sub.fail("clientSecret", "set without clientId")
			}
		}
		a.Scopes = sub.list("scopes", false)
		for i, s := range a.Scopes {
			if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
				sub.fail("scopes["+strconv.Itoa(i)+"]", "a scope is one word with no spaces or quotes")
			}
		}
		if p, ok := sub.get("redirectPort"); ok {
			n, isNum := p.(json.Number)
			port, err := strconv.Atoi(string(n))
			if !isNum || err != nil || port < 1 || port > 65535 {
				sub.fail("redirectPort", "want a port number from 1 to 65535")
			}
			a.RedirectPort = port
		}
		sub.warnUnknown(authKeys...)
		if sub.err != nil && r.err == nil {
			r.err = sub.err
		}
		return a
	default:
		r.fail(key, "want false, true or an object with clientId, clientSecret, scopes, redirectPort; not %s", kind(v))
		return nil
	}
}

// StaticAuthorization reports whether the server's static headers carry
// Authorization, which wins over OAuth.
func (s Server) StaticAuthorization() bool {
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// OAuth reports whether mcpx may log in to the server: a remote server
// without "auth": false and without a static Authorization header.
func (s Server) OAuth() bool {
	return s.Transport != TransportStdio && (s.Auth == nil || !s.Auth.Disabled) && !s.StaticAuthorization()
}
