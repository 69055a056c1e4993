package config

import (
	"fmt"
	"net/url"
	"strings"
)

// OAuth is http.oauth: `serve --http` as an OAuth 2.1 resource server. A
// request may carry an access token, a JWT the authorization server
// Issuer signed, instead of the token or a named API key; it is let in
// when its signature checks against the issuer's keys and its issuer,
// audience, lifetime and scopes are right, and sees the profile its
// scopes or claims map to (Profiles).
type OAuth struct {
	// Issuer is the authorization server's issuer identifier, as its
	// tokens' iss claim says it; its metadata (RFC 8414) names its keys.
	Issuer string
	// JWKSURL is where the issuer's keys are, when its metadata is not to
	// be asked (or has no jwks_uri).
	JWKSURL string
	// Resource is the protected resource's identifier, the URL of /mcp as
	// clients reach it (behind a proxy, the public one). Empty: the URL
	// each request came to, from its Host.
	Resource string
	// Audience is the aud a token must hold; empty means Resource (the
	// resource indicator the client asked the token for, RFC 8707).
	Audience string
	// Scopes must all be in every token (the scope claim).
	Scopes []string
	// PrincipalClaim names the claim that says who a token's holder is
	// in the audit trail and spans; empty means "sub".
	PrincipalClaim string
	// Profiles map a token to the profile it sees: the first rule that
	// matches wins. With rules, a token no rule matches is refused; with
	// none, every token sees the whole catalog.
	Profiles []OAuthProfileRule
}

// OAuthProfileRule is one of http.oauth.profiles: a token with Scope in
// its scopes, or whose claim Claim is Value (or a list holding it), sees
// Profile ("": the whole catalog).
type OAuthProfileRule struct {
	Scope        string
	Claim, Value string
	Profile      string
}

// oauth reads http.oauth.
func (p *parser) oauth(r *reader) {
	v, ok := r.get("oauth")
	if !ok {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail("oauth", "want an object with issuer (and audience, scopes, profiles), not %s", kind(v))
		return
	}
	o := &reader{p: p, prefix: r.prefix + "oauth.", m: m, unset: r.unset}
	var c OAuth
	c.Issuer, _, _ = o.expanded("issuer")
	c.JWKSURL, _, _ = o.expanded("jwksUrl")
	c.Resource, _, _ = o.expanded("resource")
	c.Audience, _, _ = o.expanded("audience")
	c.Scopes = o.list("scopes", true)
	c.PrincipalClaim, _ = o.label("principalClaim")
	for _, f := range []struct{ name, value string }{{"issuer", c.Issuer}, {"jwksUrl", c.JWKSURL}, {"resource", c.Resource}} {
		if f.value == "" || strings.Contains(f.value, "${") {
			continue
		}
		if u, err := url.Parse(f.value); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			o.fail(f.name, "want an http(s) URL, not %q", f.value)
		}
	}
	if c.Issuer == "" && o.err == nil {
		o.fail("issuer", "required: the authorization server whose tokens are let in")
	}
	c.Profiles = o.oauthRules("profiles")
	o.warnUnknown("issuer", "jwksUrl", "resource", "audience", "scopes", "principalClaim", "profiles")
	if o.err != nil {
		p.errs = append(p.errs, o.err)
		return
	}
	p.cfg.HTTP.OAuth = &c
}

// oauthRules reads a list of {"scope": S, "profile": P} and {"claim": C,
// "value": V, "profile": P}.
func (r *reader) oauthRules(key string) []OAuthProfileRule {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		r.fail(key, "want a list of {\"scope\": S, \"profile\": P} or {\"claim\": C, \"value\": V, \"profile\": P}, not %s", kind(v))
		return nil
	}
	var rules []OAuthProfileRule
	for i, item := range items {
		field := fmt.Sprintf("%s[%d]", key, i)
		m, ok := item.(map[string]any)
		if !ok {
			r.fail(field, "want an object, not %s", kind(item))
			return nil
		}
		e := &reader{p: r.p, prefix: r.prefix + field + ".", m: m}
		var rule OAuthProfileRule
		rule.Scope, _ = e.label("scope")
		rule.Claim, _ = e.label("claim")
		rule.Value, _ = e.label("value")
		rule.Profile, _ = e.label("profile")
		switch {
		case e.err != nil:
		case (rule.Scope == "") == (rule.Claim == ""):
			e.fail("scope", "want scope, or claim and value: one of the two")
		case rule.Claim != "" && rule.Value == "":
			e.fail("value", "required with claim: the value the claim must hold")
		case rule.Scope != "" && rule.Value != "":
			e.fail("value", "only with claim")
		}
		e.warnUnknown("scope", "claim", "value", "profile")
		if e.err != nil {
			r.err = e.err
			return nil
		}
		rules = append(rules, rule)
	}
	return rules
}

// checkOAuthProfiles reports rules mapping to a profile the config does
// not define; it runs once the profiles are read.
func (p *parser) checkOAuthProfiles() {
	o := p.cfg.HTTP.OAuth
	if o == nil {
		return
	}
	for i, rule := range o.Profiles {
		if rule.Profile == "" {
			continue
		}
		if _, ok := p.cfg.Profiles[rule.Profile]; !ok {
			p.errs = append(p.errs, &Error{File: p.file, Field: fmt.Sprintf("http.oauth.profiles[%d].profile", i), Msg: UnknownProfile(rule.Profile, p.cfg.ProfileNames())})
		}
	}
}
