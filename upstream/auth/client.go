package auth

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/upstream/auth/oauth"
)

// chooseClient picks who mcpx logs in as at the authorization server of
// md, in the order of MCP's client registration page:
//
//  1. the config's clientId, registered beforehand (refused when
//     auth.issuer names another authorization server, or, without it,
//     when the last login with it was at another one);
//  2. the config's clientMetadataUrl, where the server accepts client ID
//     metadata documents;
//  3. the registration an earlier login made with this server;
//  4. a new dynamic registration (RFC 7591).
//
// r is the login's record, already cleared of a registration made with
// another issuer; it gets the registration to keep. before is the issuer
// of the last login ("" for none).
func (a *Authenticator) chooseClient(ctx context.Context, r *Record, md *oauth.Metadata, before, redirect string, scopes []string) (oauth.Client, error) {
	switch {
	case a.cfg.ClientID != "":
		if isMetadataDocument(a.cfg.ClientID) && !md.ClientIDMetadataDocumentSupported {
			return oauth.Client{}, fmt.Errorf("servers.%s.auth.clientId is a client ID metadata document, which the authorization server of %s does not accept (no client_id_metadata_document_supported): give a registered client ID, or none for dynamic registration", a.server, a.server)
		}
		// The issuer is typed by hand: a final slash is forgiven, as
		// discovery forgives it.
		if a.cfg.Issuer != "" && strings.TrimSuffix(a.cfg.Issuer, "/") != strings.TrimSuffix(md.Issuer, "/") {
			// Pre-registered credentials belong to one authorization
			// server: say so rather than present them to another.
			return oauth.Client{}, fmt.Errorf("servers.%s.auth.clientId was registered with %s (auth.issuer), but the authorization server of %s is now %s: register mcpx there and update clientId and issuer", a.server, a.cfg.Issuer, a.server, md.Issuer)
		}
		if a.cfg.Issuer == "" && before != "" && before != md.Issuer {
			return oauth.Client{}, fmt.Errorf("servers.%s.auth.clientId was last used with %s, but the authorization server of %s is now %s: if clientId is registered there too, set servers.%s.auth.issuer to %s; else register mcpx there and update clientId", a.server, before, a.server, md.Issuer, a.server, md.Issuer)
		}
		r.ClientID, r.ClientSecret, r.AuthMethod, r.RedirectURI = "", "", "", redirect
		return oauth.Client{ID: a.cfg.ClientID, Secret: a.cfg.ClientSecret}, nil
	case a.cfg.ClientMetadataURL != "" && md.ClientIDMetadataDocumentSupported:
		// The document is mcpx's own, portable across servers.
		r.ClientID, r.ClientSecret, r.AuthMethod, r.RedirectURI = a.cfg.ClientMetadataURL, "", oauth.AuthNone, redirect
		return oauth.Client{ID: a.cfg.ClientMetadataURL, AuthMethod: oauth.AuthNone}, nil
	case r.ClientID != "" && !isMetadataDocument(r.ClientID):
		return a.client(r), nil
	case md.RegistrationEndpoint != "":
		reg, err := oauth.Register(ctx, a.http, md, "mcpx", []string{redirect}, scopes)
		if err != nil {
			return oauth.Client{}, fmt.Errorf("register mcpx with the authorization server of %s: %w", a.server, err)
		}
		r.ClientID, r.ClientSecret, r.AuthMethod, r.RedirectURI = reg.ID, reg.Secret, reg.AuthMethod, redirect
		return *reg, nil
	}
	also := ""
	if a.cfg.ClientMetadataURL != "" {
		also = " and accepts no client ID metadata document"
	}
	return oauth.Client{}, fmt.Errorf("the authorization server of %s offers no dynamic client registration%s: set servers.%s.auth.clientId", a.server, also, a.server)
}

// client is the client a login in r was made as: the config's, else the
// one r registered (or r's client ID metadata document).
func (a *Authenticator) client(r *Record) oauth.Client {
	if a.cfg.ClientID != "" {
		return oauth.Client{ID: a.cfg.ClientID, Secret: a.cfg.ClientSecret}
	}
	return oauth.Client{ID: r.ClientID, Secret: r.ClientSecret, AuthMethod: r.AuthMethod}
}

// isMetadataDocument reports whether a client ID is a client ID metadata
// document's URL (MCP authorization 2025-11-25): an absolute URL with a
// path, which the authorization server fetches to learn about the client.
// The server must say it accepts those (client_id_metadata_document_supported
// in its metadata).
func isMetadataDocument(clientID string) bool {
	u, err := url.Parse(clientID)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && strings.Trim(u.Path, "/") != ""
}

// offlineAccess is the scope that asks for a refresh token (OpenID
// Connect Core §11).
const offlineAccess = "offline_access"

// withOfflineAccess adds offline_access to the scopes when the
// authorization server lists it in scopes_supported, as MCP 2026-07-28
// allows (SEP-2207): mcpx keeps its logins for weeks, so it wants refresh
// tokens. A server that does not list it never gets it. A login that asks
// for no scope at all stays that way: offline_access alone would narrow
// what the server grants by default.
func withOfflineAccess(scopes []string, md *oauth.Metadata) []string {
	if len(scopes) == 0 || slices.Contains(scopes, offlineAccess) || !slices.Contains(md.ScopesSupported, offlineAccess) {
		return scopes
	}
	return append(slices.Clip(scopes), offlineAccess)
}
