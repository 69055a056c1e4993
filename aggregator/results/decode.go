package results

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpx/mcpx/internal/nozero"
)

// decode returns the text of raw, a JSON string as a scan of its JSON
// found it, and whether raw is one. With nothing escaped the text is the
// bytes between the quotes themselves, not a copy (callers only read
// it), taken as they are; else it is decoded
// into memory of its own, once, as encoding/json decodes a string (which
// makes two copies: the decoded bytes, then the string). A text is the
// largest thing a cut keeps, tens of megabytes, so the copies count.
func decode(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	// Not zeroed: pages are taken only as the text fills them, which a
	// text full of escapes leaves well short of the raw length.
	return appendDecoded(nozero.Make(len(inner)), inner, -1)
}

// decodePrefix returns the first at most n bytes of the text of raw, a
// JSON string, in whole characters, decoded into memory of its own: the
// start of a long string, without decoding the rest.
func decodePrefix(raw []byte, n int) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	return appendDecoded(make([]byte, 0, min(n, len(raw))), raw[1:len(raw)-1], n)
}

// appendDecoded appends the text of inner, the inside of a JSON string,
// to dst, stopping before the character that would take the text over
// limit bytes (limit < 0: no limit). It decodes as encoding/json does:
// an escaped lone surrogate, or a byte that is not UTF-8, becomes
// U+FFFD. ok is false for what a JSON string cannot hold (a control
// character, a bad escape) in what was read.
func appendDecoded(dst, inner []byte, limit int) (out []byte, ok bool) {
	start := len(dst)
	full := func(n int) bool { return limit >= 0 && len(dst)-start+n > limit }
	for i := 0; i < len(inner); {
		c := inner[i]
		switch {
		case c == '\\':
			if i+1 >= len(inner) {
				return dst, false
			}
			e := inner[i+1]
			var r rune
			size := 2
			switch e {
			case '"', '\\', '/':
				r = rune(e)
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				r = hex4(inner[i+2:])
				if r < 0 {
					return dst, false
				}
				size = 6
				if utf16.IsSurrogate(r) {
					// A pair is two escapes; a lone half is U+FFFD, and an
					// escape after it is read on its own.
					if i+12 <= len(inner) && inner[i+6] == '\\' && inner[i+7] == 'u' {
						if d := utf16.DecodeRune(r, hex4(inner[i+8:])); d != utf8.RuneError {
							r, size = d, 12
							break
						}
					}
					r = utf8.RuneError
				}
			default:
				return dst, false
			}
			if full(utf8.RuneLen(r)) {
				return dst, true
			}
			dst = utf8.AppendRune(dst, r)
			i += size
		case c < 0x20 || c == '"':
			return dst, false
		case c < utf8.RuneSelf:
			// A run of plain ASCII up to the next escape or other byte.
			j := i + 1
			for j < len(inner) && inner[j] >= 0x20 && inner[j] < utf8.RuneSelf && inner[j] != '\\' && inner[j] != '"' {
				j++
			}
			if limit >= 0 {
				j = min(j, i+limit-(len(dst)-start))
				if j == i {
					return dst, true
				}
			}
			dst = append(dst, inner[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(inner[i:])
			if r == utf8.RuneError && size == 1 {
				if full(3) {
					return dst, true
				}
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				if full(size) {
					return dst, true
				}
				dst = append(dst, inner[i:i+size]...)
			}
			i += size
		}
	}
	return dst, true
}

// hex4 is the value of the four hex digits b starts with, -1 if it does
// not.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// bytesString is b as a string, without a copy, for reading: b must not
// change while the string is used.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
