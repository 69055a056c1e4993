package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxNameLen is the longest tool name common clients accept
// (^[a-zA-Z0-9_-]{1,64}$).
const maxNameLen = 64

// exposedName joins prefix and name into the name a client is shown. A
// valid join is returned as it is. Otherwise each byte a client would
// reject becomes '_': "my server" + "_" + "echo" is "my_server_echo".
// Such a cleaned name is provisional: two different names can clean up
// to the same text, so the catalog keeps it only when no other
// capability has or would get it, and otherwise gives it [hashedName]
// (see Catalog.settle). A join too long for a client gets [hashedName]
// at once.
func exposedName(prefix, sep, name string) (exposed string, provisional bool) {
	full := join(prefix, sep, name)
	if validName(full) {
		return full, false
	}
	if full == "" || len(full) > maxNameLen {
		return hashedName(prefix, sep, name), false
	}
	return string(clean(full)), true
}

// hashedName is the join of prefix and name cleaned as [exposedName]
// cleans it, shortened to leave room for '_' and a short hash of the
// unmodified join, which it then ends with. Two different joins never end
// up the same, and the result is the same on every run and machine
// (clients remember tool names).
func hashedName(prefix, sep, name string) string {
	full := join(prefix, sep, name)
	sum := sha256.Sum256([]byte(full))
	suffix := "_" + hex.EncodeToString(sum[:3])
	c := clean(full)
	if len(c) > maxNameLen-len(suffix) {
		c = c[:maxNameLen-len(suffix)]
	}
	return string(c) + suffix
}

// namePrefix is how the exposed names of a server with prefix begin: the
// prefix and separator, cleaned as [exposedName] cleans them ("my server"
// gives "my_server_"); "" without a prefix.
func namePrefix(prefix, sep string) string {
	if prefix == "" {
		return ""
	}
	return string(clean(prefix + sep))
}

func join(prefix, sep, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + sep + name
}

// clean returns s with each byte a client would reject replaced by '_'.
func clean(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		if !validByte(c) {
			b[i] = '_'
		}
	}
	return b
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
