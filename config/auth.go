package config

import (
	"encoding/json"
	"net"
	"net/url"
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
	// server; "" means a client ID metadata document (ClientMetadataURL)
	// or dynamic client registration. An https URL here is a client ID
	// metadata document, for servers that must accept those.
	ClientID string
	// ClientSecret goes with ClientID for a confidential client; it must be
	// written as a ${VAR} reference, never as the secret itself.
	ClientSecret string
	// Issuer is the authorization server ClientID was registered with;
	// when set, a login refuses to present ClientID to another one (the
	// resource moved to a new authorization server). "" means no check.
	Issuer string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing mcpx, used as the client ID with authorization servers
	// that accept those (client_id_metadata_document_supported); others
	// get dynamic client registration. "" means none.
	ClientMetadataURL string
	// Scopes are asked for in addition to those the server names.
	Scopes []string
	// RedirectPort fixes the loopback redirect listener's port, for
	// registrations that allow only one redirect URI; 0 picks a free port.
	RedirectPort int
}

var authKeys = []string{"clientId", "clientSecret", "issuer", "clientMetadataUrl", "scopes", "redirectPort"}

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
		if a.Issuer, _, _ = sub.expanded("issuer"); a.Issuer != "" && sub.err == nil {
			if !webURL(a.Issuer, false) {
				sub.fail("issuer", "want the authorization server's issuer, an http(s) URL")
			} else if a.ClientID == "" {
				sub.fail("issuer", "set without clientId: it names where clientId was registered")
			}
		}
		if a.ClientMetadataURL, _, _ = sub.expanded("clientMetadataUrl"); a.ClientMetadataURL != "" && sub.err == nil && !webURL(a.ClientMetadataURL, true) {
			sub.fail("clientMetadataUrl", "want the https URL of a client ID metadata document, with a path (http only on a loopback host)")
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
		r.fail(key, "want false, true or an object with %s; not %s", strings.Join(authKeys, ", "), kind(v))
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

// webURL reports whether s is an absolute https URL, or http on a loopback
// host (for servers and documents on the same machine); document also
// asks for a path, as a client ID metadata document's URL has.
func webURL(s string, document bool) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return false
	}
	switch u.Scheme {
	case "https":
	case "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	default:
		return false
	}
	return !document || strings.Trim(u.Path, "/") != ""
}
