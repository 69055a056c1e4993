// Package oauth is the client side of OAuth 2.1 as the MCP authorization
// spec (2026-07-28) uses it: finding a protected resource's authorization
// server ([Discover]: RFC 9728, then RFC 8414 or OpenID Connect discovery),
// registering a client ([Register], RFC 7591), and the token requests of
// the authorization code flow with PKCE ([Config.AuthCodeURL],
// [Config.Exchange], [Config.Refresh], [Config.Revoke]), every one of them
// carrying the resource indicator (RFC 8707), and the check of the
// authorization response's issuer ([CheckIssuer], RFC 9207).
//
// It keeps no state: where tokens live, and when to refresh them, is the
// caller's business (mcpx's upstream/auth).
//
//	d, _ := oauth.Discover(ctx, hc, "https://mcp.example.com/mcp", challenge.ResourceMetadata)
//	c := &oauth.Config{Metadata: d.Metadata, Resource: d.Resource, Client: oauth.Client{ID: id}, HTTPClient: hc}
//	verifier, state := oauth.NewVerifier(), oauth.NewState()
//	u, _ := c.AuthCodeURL(redirectURI, state, oauth.S256Challenge(verifier), scopes)
//	// … the browser comes back to redirectURI with code, state and maybe iss …
//	if err := oauth.CheckIssuer(d.Metadata, q.Get("iss"), q.Has("iss")); err != nil { … }
//	g, err := c.Exchange(ctx, redirectURI, q.Get("code"), verifier)
//
// Every request is bounded in time and in the size of its answer; an
// error response becomes an [*Error]. No error text holds a token, a
// client secret, a code or a code verifier.
package oauth
