// Package accesstoken is `serve --http` as an OAuth 2.1 resource server
// (MCP authorization; RFC 9068 JWT access tokens): it checks that an
// access token is a JWT signed by one of the configured issuer's keys
// (its JWK Set, fetched and cached, fetched again when a token names a
// key it lacks: keys.go), issued by that issuer for this resource, within
// its lifetime and with the scopes required, and maps its scopes or
// claims to the profile its holder sees. It also writes the resource's
// metadata (RFC 9728) and the challenges of a refusal (RFC 6750 §3).
package accesstoken

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpx/mcpx/config"
)

// algorithms are the signatures accepted: the asymmetric ones. "none" and
// the HMACs (whose key a resource server would have to share) are not.
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// leeway is the clock skew allowed between the issuer and mcpx.
const leeway = time.Minute

// Checker checks access tokens against one configuration. It is safe for
// concurrent use; its key cache lives as long as it does.
type Checker struct {
	cfg  config.OAuth
	keys *keySet
	now  func() time.Time
}

// New returns a Checker for cfg that fetches the issuer's metadata and
// keys with hc (nil: a client without a timeout of its own; every fetch
// is bounded here).
func New(cfg config.OAuth, hc *http.Client) *Checker {
	if hc == nil {
		hc = &http.Client{}
	}
	c := &Checker{cfg: cfg, now: time.Now}
	c.keys = &keySet{hc: hc, issuer: cfg.Issuer, url: cfg.JWKSURL, now: c.now}
	return c
}

// Config is the configuration c checks against.
func (c *Checker) Config() config.OAuth { return c.cfg }

// Token is what a good access token says.
type Token struct {
	// Principal names the token's holder: "oauth:" and its
	// PrincipalClaim (sub by default), so that it cannot pass for a
	// named API key in the audit trail.
	Principal string
	// Profile is the profile the token sees ("": the whole catalog).
	Profile string
	Scopes  []string
	Expiry  time.Time
}

// Error is why a token was refused, as RFC 6750 §3.1 names it.
type Error struct {
	// Code is "invalid_token" (401) or "insufficient_scope" (403).
	Code        string
	Description string
	// Scope is, for insufficient_scope, the scopes the request needs.
	Scope string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

// Status is the HTTP status of the refusal.
func (e *Error) Status() int {
	if e.Code == "insufficient_scope" {
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

func invalid(format string, args ...any) *Error {
	return &Error{Code: "invalid_token", Description: fmt.Sprintf(format, args...)}
}

// claims are the claims read besides the registered ones.
type claims struct {
	Scope any `json:"scope"` // RFC 9068: a space-separated string
	Scp   any `json:"scp"`   // what some issuers write instead: a list
}

// Check checks raw, an access token presented to a resource whose
// identifiers are audiences (the first is the one a token asks for;
// http.oauth.audience, when set, replaces them all). A refusal is an
// [*Error]; ctx bounds a fetch of the issuer's keys.
func (c *Checker) Check(ctx context.Context, raw string, audiences ...string) (*Token, error) {
	tok, err := jwt.ParseSigned(raw, algorithms)
	if err != nil {
		return nil, invalid("not a JWT signed with an asymmetric algorithm (%s): %v", algNames(), err)
	}
	kid := tok.Headers[0].KeyID
	keys, err := c.keys.find(ctx, kid)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, invalid("its signing key: %v", err)
	}
	var std jwt.Claims
	var more claims
	var all map[string]any
	verified := false
	for _, k := range keys {
		if tok.Claims(k.Key, &std, &more, &all) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, invalid("the signature does not verify with the issuer's keys")
	}
	if err := c.checkClaims(&std, audiences); err != nil {
		return nil, err
	}
	t := &Token{Scopes: scopes(more), Expiry: std.Expiry.Time()}
	claim := c.cfg.PrincipalClaim
	if claim == "" {
		claim = "sub"
	}
	who, _ := all[claim].(string)
	if who == "" {
		return nil, invalid("no %s claim says whose token it is", claim)
	}
	t.Principal = "oauth:" + who
	if missing := missingScopes(c.cfg.Scopes, t.Scopes); len(missing) > 0 {
		return nil, &Error{Code: "insufficient_scope", Description: "the token lacks scope " + strings.Join(missing, " "), Scope: strings.Join(c.cfg.Scopes, " ")}
	}
	prof, ok := c.profile(t.Scopes, all)
	if !ok {
		return nil, &Error{Code: "insufficient_scope", Description: "no http.oauth.profiles rule matches the token's scopes or claims", Scope: strings.Join(c.ScopesSupported(), " ")}
	}
	t.Profile = prof
	return t, nil
}

// checkClaims checks the issuer, audience and lifetime.
func (c *Checker) checkClaims(std *jwt.Claims, audiences []string) error {
	// Only a final slash may differ: both spellings name one issuer, and
	// issuers differ in which they write.
	if strings.TrimSuffix(std.Issuer, "/") != strings.TrimSuffix(c.cfg.Issuer, "/") {
		return invalid("issued by %q, not by %q", std.Issuer, c.cfg.Issuer)
	}
	if c.cfg.Audience != "" {
		audiences = []string{c.cfg.Audience}
	} else if c.cfg.Resource != "" {
		audiences = []string{c.cfg.Resource}
	}
	if !slices.ContainsFunc(audiences, std.Audience.Contains) {
		return invalid("its audience %q is not this server (%s)", []string(std.Audience), strings.Join(audiences, " "))
	}
	now := c.now()
	if std.Expiry == nil {
		return invalid("it has no expiry (exp)")
	}
	if now.After(std.Expiry.Time().Add(leeway)) {
		return invalid("it expired at %s", std.Expiry.Time().UTC().Format(time.RFC3339))
	}
	if std.NotBefore != nil && now.Add(leeway).Before(std.NotBefore.Time()) {
		return invalid("it is not valid before %s", std.NotBefore.Time().UTC().Format(time.RFC3339))
	}
	if std.IssuedAt != nil && now.Add(leeway).Before(std.IssuedAt.Time()) {
		return invalid("it was issued in the future (%s)", std.IssuedAt.Time().UTC().Format(time.RFC3339))
	}
	return nil
}

// profile is the profile of the first rule the token matches; with no
// rules, the whole catalog.
func (c *Checker) profile(scopes []string, all map[string]any) (string, bool) {
	if len(c.cfg.Profiles) == 0 {
		return "", true
	}
	for _, r := range c.cfg.Profiles {
		if r.Scope != "" && slices.Contains(scopes, r.Scope) || r.Claim != "" && holds(all[r.Claim], r.Value) {
			return r.Profile, true
		}
	}
	return "", false
}

// ScopesSupported are the scopes the resource's metadata lists: the
// required ones and those the profile rules name.
func (c *Checker) ScopesSupported() []string {
	out := slices.Clone(c.cfg.Scopes)
	for _, r := range c.cfg.Profiles {
		if r.Scope != "" && !slices.Contains(out, r.Scope) {
			out = append(out, r.Scope)
		}
	}
	return out
}

// holds reports whether a claim is v or a list holding v.
func holds(claim any, v string) bool {
	switch c := claim.(type) {
	case string:
		return c == v
	case []any:
		return slices.Contains(c, any(v))
	}
	return false
}

// scopes reads scope (a space-separated string) or scp (a list or a
// string).
func scopes(c claims) []string {
	for _, v := range []any{c.Scope, c.Scp} {
		switch s := v.(type) {
		case string:
			return strings.Fields(s)
		case []any:
			var out []string
			for _, e := range s {
				if str, ok := e.(string); ok {
					out = append(out, str)
				}
			}
			return out
		}
	}
	return nil
}

func missingScopes(need, have []string) []string {
	var out []string
	for _, s := range need {
		if !slices.Contains(have, s) {
			out = append(out, s)
		}
	}
	return out
}

func algNames() string {
	names := make([]string, len(algorithms))
	for i, a := range algorithms {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// AsError returns err as an *Error, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
