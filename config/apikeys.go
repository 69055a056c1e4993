package config

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// APIKey is one of http.keys: a client of `serve --http` that presents
// the key whose SHA-256 is Hash is Name (in the audit trail and spans),
// and sees only Profile ("": the whole catalog). The key itself is never
// stored; removing the entry revokes it.
type APIKey struct {
	Name    string
	Hash    [sha256.Size]byte
	Profile string
}

// apiKeyPrefix starts every key mcpx makes, so that a key pasted
// somewhere it should not be is recognisable (and scanners can match it).
const apiKeyPrefix = "mcpx_"

// NewAPIKey makes a key: mcpx_ and 32 random bytes, base64url. It returns
// the key, to show once, and its hash, to store.
func NewAPIKey() (key string, hash [sha256.Size]byte) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	key = apiKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, sha256.Sum256([]byte(key))
}

// HashString is how http.keys writes a hash: "sha256:" and 64 hex digits.
func HashString(h [sha256.Size]byte) string { return "sha256:" + hex.EncodeToString(h[:]) }

// apiKeys reads http.keys: NAME -> {"hash": "sha256:...", "profile": P}.
func (p *parser) apiKeys(r *reader) {
	m := r.object("keys")
	if m == nil {
		return
	}
	seen := map[[sha256.Size]byte]string{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		field := "keys." + name
		if name == "" || strings.ContainsFunc(name, unicode.IsControl) || strings.ContainsFunc(name, unicode.IsSpace) {
			p.errs = append(p.errs, &Error{File: p.file, Field: r.prefix + "keys", Msg: fmt.Sprintf("key name %q: want a name without spaces or control characters", name)})
			continue
		}
		e, ok := m[name].(map[string]any)
		if !ok {
			p.errs = append(p.errs, &Error{File: p.file, Field: r.prefix + field, Msg: "want an object with hash and profile, not " + kind(m[name])})
			continue
		}
		k := &reader{p: p, prefix: r.prefix + field + ".", m: e}
		hs, _ := k.str("hash")
		h, err := parseHash(hs)
		if err != nil {
			k.fail("hash", "%v", err)
		} else if other, dup := seen[h]; dup {
			k.fail("hash", "the same key as %s: each name needs a key of its own (mcpx keys add makes one)", other)
		}
		seen[h] = name
		prof, _ := k.str("profile")
		k.warnUnknown("hash", "profile")
		if k.err != nil {
			p.errs = append(p.errs, k.err)
			continue
		}
		p.cfg.HTTP.Keys = append(p.cfg.HTTP.Keys, APIKey{Name: name, Hash: h, Profile: prof})
	}
}

// parseHash reads "sha256:<64 hex digits>".
func parseHash(s string) ([sha256.Size]byte, error) {
	var h [sha256.Size]byte
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	if !ok {
		return h, fmt.Errorf("want \"sha256:\" and 64 hex digits (mcpx keys add writes it), not a key or another hash")
	}
	b, err := hex.DecodeString(hexPart)
	if err != nil || len(b) != sha256.Size {
		return h, fmt.Errorf("want \"sha256:\" and 64 hex digits, got %d characters after it", len(hexPart))
	}
	copy(h[:], b)
	return h, nil
}

// checkKeyProfiles reports keys bound to a profile the config does not
// define; it runs once the profiles are read.
func (p *parser) checkKeyProfiles() {
	for _, k := range p.cfg.HTTP.Keys {
		if k.Profile == "" {
			continue
		}
		if _, ok := p.cfg.Profiles[k.Profile]; !ok {
			p.errs = append(p.errs, &Error{File: p.file, Field: "http.keys." + k.Name + ".profile", Msg: UnknownProfile(k.Profile, p.cfg.ProfileNames())})
		}
	}
}
