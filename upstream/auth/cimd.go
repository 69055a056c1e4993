package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// isMetadataDocument reports whether a client ID is a client ID metadata
// document's URL (MCP authorization 2025-11-25): an absolute URL with a
// path, which the authorization server fetches to learn about the client.
func isMetadataDocument(clientID string) bool {
	u, err := url.Parse(clientID)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && strings.Trim(u.Path, "/") != ""
}

// acceptsMetadataDocuments reports whether the authorization server says
// it accepts client ID metadata documents
// (client_id_metadata_document_supported in its RFC 8414 metadata, a field
// mcp-go's AuthServerMetadata does not carry).
func (a *Authenticator) acceptsMetadataDocuments(ctx context.Context, issuer string) (bool, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return false, fmt.Errorf("bad issuer %q", issuer)
	}
	root := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	candidates := []string{root + "/.well-known/oauth-authorization-server" + path, root + "/.well-known/openid-configuration" + path}
	if path != "" {
		candidates = append(candidates, root+path+"/.well-known/openid-configuration")
	}
	for _, c := range candidates {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c, nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := a.http.Do(req)
		if err != nil {
			return false, fmt.Errorf("read the authorization server's metadata: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			continue
		}
		var md struct {
			Supported bool `json:"client_id_metadata_document_supported"`
		}
		if json.Unmarshal(b, &md) == nil {
			return md.Supported, nil
		}
	}
	return false, nil
}
