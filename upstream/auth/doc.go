// Package auth logs mcpx in to remote MCP servers that sit behind OAuth 2.1,
// per the MCP authorization spec (2026-07-28). The OAuth requests
// themselves (discovery, registration, code exchange, refresh, revocation)
// are package [oauth]'s; this package keeps the login, in a [Store], and
// puts it on requests.
//
// An [Authenticator] holds one server's login. Its [Authenticator.RoundTripper]
// goes under the server's HTTP transport: it adds the access token, refreshes
// it shortly before it expires and once more when the server answers 401,
// and turns a 401 it cannot cure, or a 403 insufficient_scope, into a
// [*LoginRequiredError]. [Authenticator.StartLogin] runs the login: discovery
// from the server's 401 (RFC 9728, then RFC 8414 or OpenID discovery), a
// configured client ID, a client ID metadata document or dynamic
// registration (RFC 7591), and the authorization code flow with PKCE S256,
// state and the resource indicator (RFC 8707), the browser coming back to
// a loopback listener, whose answer must carry the authorization server's
// issuer where it sends one (RFC 9207). A login, its tokens and its
// registration belong to one authorization server, by issuer: when the
// resource moves to another, mcpx logs in there anew.
//
//	store, _ := auth.OpenStore(nil) // the OS keychain, else 0600 files
//	a, _ := auth.New(&auth.Options{Server: "linear", URL: u, Store: store})
//	flow, _ := a.StartLogin(ctx)
//	auth.OpenBrowser(flow.URL, os.Getenv("BROWSER"))
//	res, err := flow.Wait(ctx, 5*time.Minute)
//
// Tokens live in a [Store]: the OS keychain where there is one, else a
// [FileStore] of 0600 files under the user's config directory; never in the
// config file, and never in a log line or an error.
package auth
