package browsertest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Token errors, as the relay tells them apart.
var (
	errTokenInvalid = errors.New("invalid token")
	errTokenExpired = errors.New("token expired")
)

// Token returns an HS256 JWT signed with the relay's secret, with the claims
// a real relay's tokens carry: user_id, email, session_id, iat, exp and
// connection_url (= [Relay.MCPURL]). A zero ttl means one hour; a negative
// ttl gives a token that expired that long ago.
func (r *Relay) Token(userID string, ttl time.Duration) string {
	if ttl == 0 {
		ttl = time.Hour
	}
	now := time.Now()
	return r.SignToken(map[string]any{
		"user_id":        userID,
		"email":          userID + "@example.test",
		"session_id":     newUUID(),
		"iat":            now.Unix(),
		"exp":            now.Add(ttl).Unix(),
		"connection_url": r.MCPURL(),
	})
}

// SignToken signs arbitrary claims with the relay's secret, for tokens
// [Relay.Token] cannot make (a missing connection_url, an odd user_id).
func (r *Relay) SignToken(claims map[string]any) string {
	return signHS256(r.secret, claims)
}

func signHS256(secret []byte, claims map[string]any) string {
	enc := base64.RawURLEncoding
	payload, err := json.Marshal(claims)
	if err != nil {
		panic("browsertest: claims do not marshal: " + err.Error())
	}
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload)
	return head + "." + enc.EncodeToString(mac(secret, head))
}

func mac(secret []byte, s string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(s))
	return h.Sum(nil)
}

// claims is what the relay reads from a verified token.
type claims struct {
	UserID string `json:"user_id"`
	Sub    string `json:"sub"`
	Email  string `json:"email"`
	Exp    *int64 `json:"exp"`
}

// verifyHS256 checks the signature and expiry of tok and returns its
// user id. It fails with errTokenExpired or errTokenInvalid.
func verifyHS256(secret []byte, tok string, now time.Time) (string, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", errTokenInvalid
	}
	enc := base64.RawURLEncoding
	var head struct {
		Alg string `json:"alg"`
	}
	h, err := enc.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil || json.Unmarshal(h, &head) != nil || head.Alg != "HS256" {
		return "", errTokenInvalid
	}
	sig, err := enc.DecodeString(strings.TrimRight(parts[2], "="))
	if err != nil || !hmac.Equal(sig, mac(secret, parts[0]+"."+parts[1])) {
		return "", errTokenInvalid
	}
	p, err := enc.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", errTokenInvalid
	}
	var c claims
	if err := json.Unmarshal(p, &c); err != nil {
		return "", errTokenInvalid
	}
	if c.Exp == nil {
		return "", errTokenInvalid
	}
	if now.Unix() >= *c.Exp {
		return "", errTokenExpired
	}
	if c.UserID == "" {
		c.UserID = c.Sub
	}
	if c.UserID == "" {
		return "", errTokenInvalid
	}
	return c.UserID, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("browsertest: crypto/rand: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	s := hex.EncodeToString(b[:])
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}
