package auth

import (
	"net/url"
	"strings"
)

// isMetadataDocument reports whether a client ID is a client ID metadata
// document's URL (MCP authorization 2025-11-25): an absolute URL with a
// path, which the authorization server fetches to learn about the client.
// The server must say it accepts those (client_id_metadata_document_supported
// in its metadata).
func isMetadataDocument(clientID string) bool {
	u, err := url.Parse(clientID)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && strings.Trim(u.Path, "/") != ""
}
