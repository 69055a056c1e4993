package results

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, as encoding/json writes it
// without escaping '<', '>' and '&'.
func appendString(dst []byte, s string) []byte {
	dst, _ = appendText(dst, stringBytes(s), -1, true)
	return dst
}

// appendText appends the longest start of data whose JSON string, quotes
// included, is at most room bytes (room < 0: all of data), and reports how
// many bytes of data it took. It takes whole characters only, and always
// the first, so that a reader moves on however small room is. A character
// cut short by the end of data is left for the next slice unless end says
// the text ends there.
//
// The string is what encoding/json writes with SetEscapeHTML(false):
// '"', '\\', '\n', '\r', '\t', '\b' and '\f' escaped with a backslash, other control
// characters, U+2028 and U+2029 as \uXXXX, and invalid UTF-8 as \ufffd.
func appendText(dst, data []byte, room int, end bool) ([]byte, int) {
	dst = append(dst, '"')
	used := 2
	i := 0
	for i < len(data) {
		c := data[i]
		size, width := 1, 1
		var r rune
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != '"' && c != '\\':
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				width = 2
			default:
				width = 6
			}
		} else {
			if !end && !utf8.FullRune(data[i:]) {
				break
			}
			r, size = utf8.DecodeRune(data[i:])
			width = size
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				width = 6
			}
		}
		if room >= 0 && used+width > room && i > 0 {
			break
		}
		switch {
		case width == size:
			dst = append(dst, data[i:i+size]...)
		case width == 2:
			e := c
			switch c {
			case '\n':
				e = 'n'
			case '\r':
				e = 'r'
			case '\t':
				e = 't'
			case '\b':
				e = 'b'
			case '\f':
				e = 'f'
			}
			dst = append(dst, '\\', e)
		case c < utf8.RuneSelf:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		case size == 1:
			dst = append(dst, `\ufffd`...)
		default: // U+2028, U+2029
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		}
		used += width
		i += size
	}
	return append(dst, '"'), i
}
