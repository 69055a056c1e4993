// Package hidden removes, from what upstream servers say to the model, the
// text a person reading it cannot see: Unicode tag characters
// (U+E0000–U+E007F), zero-width and other invisible format characters,
// bidirectional controls, private-use characters (whose glyph, if any,
// is a font's private business), control characters and terminal
// escape sequences in their 7-bit (ESC [) and 8-bit (U+009B) forms. A tool description is an instruction to the model; what the
// user approved by reading it must be all it says.
//
// [String] cleans one text; [Capability] cleans the texts of an MCP tool,
// prompt, resource or template object and leaves its bytes alone when
// nothing was hidden, which is the common case and costs a few scans.
// [Outlier] flags, for a person to read, a description far longer than
// its peers'; package scan finds text that speaks to the model over the
// user's head.
package hidden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s without hidden text, and how many characters it
// removed. Newlines and tabs stay: descriptions are often written in
// lines. A terminal escape sequence goes whole (ESC [ 31 m, not only ESC;
// U+009B 8 m, not only U+009B), so that no stray "[31m" or "8m" is left
// for the model either.
func String(s string) (string, int) {
	if !mayHideString(s) {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if end := escapeEnd(s, i, r, size); end > 0 {
			n += utf8.RuneCountInString(s[i:end])
			i = end
			continue
		}
		if isHidden(r) || r == utf8.RuneError && size == 1 {
			n++
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), n
}

// isHidden reports whether r is a character that shows nothing, or
// changes how the rest shows, when text is read by a person.
func isHidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r >= 0x7f && r <= 0x9f: // C0 and C1 controls, DEL
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tags
		return true
	case r >= 0xe000 && r <= 0xf8ff, r >= 0xf0000: // private use (planes 15 and 16 are all of it)
		return true
	case r >= 0x200b && r <= 0x200f, // zero-width space, joiners, LRM, RLM
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2060 && r <= 0x2064, // word joiner, invisible operators
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0xfeff, r == 0x00ad, r == 0x061c, r == 0x180e:
		return true
	}
	return false
}

// The C1 controls that open a terminal sequence with more after them.
const (
	c1DCS = 0x90 // device control string, to ST
	c1SOS = 0x98 // start of string, to ST
	c1CSI = 0x9b // control sequence: parameters, then a final byte
	c1ST  = 0x9c // string terminator
	c1OSC = 0x9d // operating system command, to BEL or ST
	c1PM  = 0x9e // privacy message, to ST
	c1APC = 0x9f // application program command, to ST
)

// escapeEnd is the index just past the terminal escape sequence that
// starts at s[i], whose first character r is size bytes long, or 0 when
// none starts there. A sequence opens with ESC and a character, or with
// the C1 control that is its 8-bit form: CSI (ESC [ or U+009B) runs to
// its final byte; OSC (ESC ] or U+009D) to BEL or ST; DCS, SOS, PM and
// APC (ESC P, X, ^, _) to ST, which is ESC \ or U+009C; any other ESC
// takes one character with it. A sequence that never ends runs to the
// end of s, as a terminal would swallow it.
func escapeEnd(s string, i int, r rune, size int) int {
	j := i + size
	kind := r
	switch r {
	case 0x1b:
		if j >= len(s) {
			return j
		}
		switch s[j] {
		case '[':
			kind = c1CSI
		case ']':
			kind = c1OSC
		case 'P':
			kind = c1DCS
		case 'X':
			kind = c1SOS
		case '^':
			kind = c1PM
		case '_':
			kind = c1APC
		default:
			_, size := utf8.DecodeRuneInString(s[j:])
			return j + size
		}
		j++
	case c1CSI, c1OSC, c1DCS, c1SOS, c1PM, c1APC:
	default:
		return 0
	}
	if kind == c1CSI {
		for ; j < len(s); j++ {
			c := s[j]
			if c >= 0x40 && c <= 0x7e {
				return j + 1
			}
			if c < 0x20 || c > 0x3f {
				return j // not a parameter or intermediate byte: the sequence is broken off
			}
		}
		return j
	}
	for j < len(s) {
		c, size := utf8.DecodeRuneInString(s[j:])
		switch {
		case c == 0x07 && kind == c1OSC, c == c1ST:
			return j + size
		case c == 0x1b && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		}
		j += size
	}
	return j
}

// mayHideString reports whether s may hold something String removes. It
// is false, at the cost of one scan, for printable ASCII, newlines, tabs
// and valid UTF-8 outside the lead bytes of the hidden ranges.
func mayHideString(s string) bool {
	for i := 0; i < len(s); i++ {
		if mayHideByte(s[i]) {
			return true
		}
	}
	return !utf8.ValidString(s)
}

// mayHideByte reports whether c may start something String removes.
func mayHideByte(c byte) bool {
	return c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 ||
		c == 0xd8 || c == 0xe1 || c == 0xe2 || c == 0xee || c == 0xef || c == 0xf3 || c == 0xf4
}

// mayHide is mayHideString for JSON text, where a hidden character may
// also be written as a \u escape. It reads raw in place: it runs on
// every capability at every catalog rebuild, and a string of it was a
// copy of each.
func mayHide(raw []byte) bool {
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	for _, c := range raw {
		if mayHideByte(c) {
			return true
		}
	}
	return !utf8.Valid(raw)
}

// Capability returns the MCP capability object raw with hidden text
// removed from what a client shows or a model reads of it: its title and
// description; a tool's annotations.title; a resource's or template's name; every title and
// description inside its inputSchema and outputSchema; a prompt's
// arguments' titles and descriptions. Names a client calls by are left
// alone (the server must get back what it listed). It returns raw itself,
// and 0, when nothing was hidden or raw is not a JSON object.
func Capability(raw json.RawMessage) (json.RawMessage, int) {
	if !mayHide(raw) {
		return raw, 0
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil || obj == nil {
		return raw, 0
	}
	n := cleanFields(obj, "title", "description")
	if ann, ok := obj["annotations"].(map[string]any); ok {
		n += cleanFields(ann, "title") // the name a client shows for a tool
	}
	if _, isTool := obj["inputSchema"]; !isTool {
		if _, isPrompt := obj["arguments"]; !isPrompt {
			n += cleanFields(obj, "name") // a resource's name is for display
		}
	}
	for _, k := range []string{"inputSchema", "outputSchema"} {
		n += cleanSchema(obj[k])
	}
	if args, ok := obj["arguments"].([]any); ok {
		for _, a := range args {
			if m, ok := a.(map[string]any); ok {
				n += cleanFields(m, "title", "description")
			}
		}
	}
	if n == 0 {
		return raw, 0
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(obj) != nil {
		return raw, 0
	}
	return bytes.TrimRight(b.Bytes(), "\n"), n
}

// cleanFields cleans the string members of m named by keys.
func cleanFields(m map[string]any, keys ...string) int {
	n := 0
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			c, k2 := String(s)
			if k2 > 0 {
				m[k], n = c, n+k2
			}
		}
	}
	return n
}

// cleanSchema cleans every title and description in a JSON Schema, at any
// depth (properties, items, definitions, ...).
func cleanSchema(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n += cleanFields(v, "title", "description")
		for _, sub := range v {
			n += cleanSchema(sub)
		}
	case []any:
		for _, sub := range v {
			n += cleanSchema(sub)
		}
	}
	return n
}

// Visible shows each character a person could not see, or that would
// drive a terminal, as <U+XXXX>: how a reviewer (mcpx trust, the
// dashboard) is shown what a server wrote.
func Visible(s string) string {
	if _, n := String(s); n == 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if _, n := String(string(r)); n > 0 {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
