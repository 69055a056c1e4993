package proxytool

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string, quotes included.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped appends the body of a JSON string holding s. Invalid UTF-8
// becomes U+FFFD, and U+2028 and U+2029 are escaped, as encoding/json does;
// '<', '>' and '&' are left alone.
func appendEscaped(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// quote returns s as a JSON string.
func quote(s string) json.RawMessage {
	return appendQuoted(make([]byte, 0, len(s)+2), []byte(s))
}

// marshalObject writes an object whose values are already JSON, keys in
// sorted order, without re-encoding the values (encoding/json would compact
// them again and escape '<', '>' and '&' in upstream text).
func marshalObject(m map[string]json.RawMessage) json.RawMessage {
	keys := make([]string, 0, len(m))
	n := 2
	for k, v := range m {
		keys = append(keys, k)
		n += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, []byte(k))
		b = append(b, ':')
		b = appendRaw(b, m[k])
	}
	return append(b, '}')
}

// marshalArray writes an array of values that are already JSON.
func marshalArray(items []json.RawMessage) json.RawMessage {
	n := 2
	for _, v := range items {
		n += len(v) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, v := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRaw(b, v)
	}
	return append(b, ']')
}

// appendRaw appends a JSON value, or null for an empty one.
func appendRaw(dst []byte, v json.RawMessage) []byte {
	if len(v) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, v...)
}

// errorResult is a CallToolResult reporting msg as an error.
func errorResult(msg string) json.RawMessage {
	b := make([]byte, 0, len(msg)+64)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = appendQuoted(b, []byte(msg))
	return append(b, `}],"isError":true}`...)
}

// shown renders a JSON value for an error message, shortened when long.
func shown(v json.RawMessage) string {
	const max = 80
	s := string(v)
	if c, err := compactJSON(v); err == nil {
		s = string(c)
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// compactJSON returns v without insignificant white space; it fails when v
// is not valid JSON.
func compactJSON(v []byte) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(v))
	if err := json.Compact(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
