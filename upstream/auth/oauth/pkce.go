package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// NewVerifier returns a PKCE code verifier (RFC 7636 §4.1): 32 bytes from
// crypto/rand, base64url-encoded into 43 characters, the length the RFC
// recommends.
func NewVerifier() string { return random32() }

// S256Challenge returns the S256 code challenge of a verifier (RFC 7636
// §4.2): the base64url SHA-256 of it, unpadded.
func S256Challenge(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// NewState returns an unguessable state for an authorization request
// (RFC 6749 §10.12), 43 characters.
func NewState() string { return random32() }

func random32() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
