package browser

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Claims are the parts of a relay access token mcpx reads. The token is a
// JWT; like the real clients, mcpx reads its payload without checking the
// signature (only the relay can).
type Claims struct {
	ConnectionURL string `json:"connection_url"`
	UserID        string `json:"user_id"`
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	Expires       int64  `json:"exp"`
}

// ErrTokenExpired is wrapped by every error caused by an expired token.
var ErrTokenExpired = errors.New("browser token expired")

// ParseToken decodes a token's claims. Errors never quote the token.
func ParseToken(token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, errors.New("browser token is not a JWT (want three dot-separated parts)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return Claims{}, errors.New("browser token payload is not base64url")
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, errors.New("browser token payload is not a JSON object")
	}
	if c.UserID == "" {
		c.UserID = c.Subject
	}
	return c, nil
}

// ExpiredAt reports whether the token has expired by now.
func (c Claims) expired(now time.Time) bool {
	return c.Expires > 0 && now.Unix() >= c.Expires
}

func (c Claims) expiry() string {
	return time.Unix(c.Expires, 0).UTC().Format(time.RFC3339)
}

// relayURL picks the URL to dial: the configured one, else the token's
// connection_url claim, which must be ws or wss.
func relayURL(configured string, c Claims, withToken bool) (string, error) {
	u := configured
	if u == "" {
		u = c.ConnectionURL
	}
	if u == "" {
		return "", errors.New("no browser relay URL: set browser.url in the config or use a token with a connection_url claim")
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "ws" && p.Scheme != "wss") || p.Host == "" {
		return "", fmt.Errorf("browser relay URL %q: want ws:// or wss://", redactURL(u))
	}
	if withToken && p.Scheme == "ws" && !loopback(p.Hostname()) {
		return "", fmt.Errorf("browser relay URL %q: the token would travel unencrypted over ws:// to another machine; use wss://", redactURL(u))
	}
	return u, nil
}

// redactURL drops the query and user info of a URL, where tokens hide.
func redactURL(s string) string {
	p, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User = nil
	p.RawQuery = ""
	return p.String()
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
