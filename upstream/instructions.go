package upstream

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcpx/mcpx/hidden"
)

// maxInstructions bounds the instructions kept of a server, in bytes.
// They are free text from the server, kept for as long as the Client
// lives and written to its cache file: a server must not make mcpx hold
// megabytes of it.
const maxInstructions = 64 << 10

// instructionsOf is the instructions member of an initialize or
// server/discover result as mcpx keeps it (see cleanInstructions). A
// member that is not a JSON string is dropped, with ok false, rather
// than failing the handshake: it is an optional text, and a server
// that gets it wrong is still a server whose tools work.
func instructionsOf(raw json.RawMessage) (text string, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return cleanInstructions(s), true
}

// cleanInstructions returns s without hidden text (package hidden) and
// cut to at most maxInstructions bytes, at a rune boundary. The text is
// cleaned before it is cut, so that the bound is on what a person can
// read of it, and a cut never splits an escape sequence into something
// that looks like text.
func cleanInstructions(s string) string {
	s, _ = hidden.String(s)
	if len(s) <= maxInstructions {
		return s
	}
	// hidden.String leaves valid UTF-8 only: backing up to a rune's
	// first byte is enough.
	cut := maxInstructions
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	// A copy: s[:cut] would keep the whole text alive.
	return strings.Clone(s[:cut])
}

// setInstructions keeps on the connection the instructions of the
// handshake's result, whose instructions member is raw. A member that
// is dropped is logged, never its text: it is the server's, untrusted,
// and may be long.
func (cn *conn) setInstructions(raw json.RawMessage) {
	text, ok := instructionsOf(raw)
	if !ok {
		cn.c.log.Debug("instructions ignored: not a JSON string")
	}
	cn.instructions = text
}
