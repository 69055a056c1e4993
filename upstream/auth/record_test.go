package auth

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

// storedRecord is a record as the build before mcpx's own OAuth client
// saved it (mcp-go's transport.Token, expires_in included), byte for byte
// as FileStore wrote it; the keychain holds the same JSON without the
// indentation.
const storedRecord = `{
  "server": "linear",
  "url": "https://mcp.example.test/mcp",
  "token": {
    "access_token": "at-1",
    "token_type": "Bearer",
    "refresh_token": "rt-1",
    "expires_in": 3600,
    "scope": "mcp:read mcp:admin",
    "expires_at": "2026-11-24T07:40:00Z"
  },
  "client_id": "client-1",
  "client_secret": "sec-1",
  "token_endpoint_auth_method": "client_secret_basic",
  "redirect_uri": "http://127.0.0.1:53682/callback",
  "resource_metadata_url": "https://mcp.example.test/.well-known/oauth-protected-resource/mcp",
  "scopes": [
    "mcp:read",
    "mcp:admin"
  ],
  "account": "alice@example.test",
  "saved": "2026-11-24T06:40:00Z"
}`

// TestEarlierRecordLoads: a login saved before the change still loads,
// every field in place, from a file and from the keychain.
func TestEarlierRecordLoads(t *testing.T) {
	ctx := context.Background()
	files := &FileStore{Dir: t.TempDir()}
	if err := os.WriteFile(files.path("k"), []byte(storedRecord), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := &KeyringStore{Keyring: &memKeyring{items: map[string]string{keyringService + "/k": storedRecord}}}
	for _, s := range []Store{files, keys} {
		r, err := s.Load(ctx, "k")
		if err != nil {
			t.Fatalf("%s: %v", s.Where(), err)
		}
		tok := r.Token
		if tok == nil || tok.AccessToken != "at-1" || tok.TokenType != "Bearer" || tok.RefreshToken != "rt-1" ||
			tok.Scope != "mcp:read mcp:admin" || !tok.ExpiresAt.Equal(time.Date(2026, 11, 24, 7, 40, 0, 0, time.UTC)) {
			t.Errorf("%s: token = %+v", s.Where(), tok)
		}
		if r.Server != "linear" || r.URL != "https://mcp.example.test/mcp" || r.ClientID != "client-1" ||
			r.ClientSecret != "sec-1" || r.AuthMethod != "client_secret_basic" ||
			r.RedirectURI != "http://127.0.0.1:53682/callback" ||
			r.ResourceMetadataURL != "https://mcp.example.test/.well-known/oauth-protected-resource/mcp" ||
			!slices.Equal(r.Scopes, []string{"mcp:read", "mcp:admin"}) || r.Account != "alice@example.test" ||
			!r.Saved.Equal(time.Date(2026, 11, 24, 6, 40, 0, 0, time.UTC)) {
			t.Errorf("%s: record = %+v", s.Where(), r)
		}
	}
}
