package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// escapeControls makes text from elsewhere (an upstream's stderr, names,
// error messages) safe to print on a terminal: escape sequences and other
// control characters would otherwise move the cursor, recolour or retitle
// the user's terminal, or hide text. Each is written as a visible Go-style
// escape (\x1b, \r, \u202e). keep lists the characters left as they are
// (a log line keeps its newlines and tabs). Invalid UTF-8 bytes are
// escaped too, since a terminal may read them as C1 controls.
func escapeControls(s string, keep string) string {
	if !needsEscape(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case strings.ContainsRune(keep, r) || !isControl(r):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

func needsEscape(s, keep string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isControl(r) && !strings.ContainsRune(keep, r) {
			return true
		}
		i += size
	}
	return false
}

// isControl reports C0 and C1 controls, DEL, and the Unicode
// bidirectional overrides and isolates, which reorder what a terminal
// shows ("Trojan Source").
func isControl(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
