package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxNameLen is the longest tool name common clients accept
// (^[a-zA-Z0-9_-]{1,64}$).
const maxNameLen = 64

// exposedName joins prefix and name. A result a client would reject is
// made valid: each bad character becomes '_', and a short hash of the
// unmodified name is appended (after shortening to fit 64 characters), so
// that two different names never end up the same and the result is the
// same on every run.
func exposedName(prefix, sep, name string) string {
	full := name
	if prefix != "" {
		full = prefix + sep + name
	}
	if validName(full) {
		return full
	}
	clean := []byte(full)
	for i, c := range clean {
		if !validByte(c) {
			clean[i] = '_'
		}
	}
	sum := sha256.Sum256([]byte(full))
	suffix := "_" + hex.EncodeToString(sum[:3])
	if len(clean) > maxNameLen-len(suffix) {
		clean = clean[:maxNameLen-len(suffix)]
	}
	return string(clean) + suffix
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !validByte(s[i]) {
			return false
		}
	}
	return true
}

func validByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
