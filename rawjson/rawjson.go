// Package rawjson finds the top-level members of a JSON object without
// decoding it: one pass over the bytes, no allocation, values returned as
// sub-slices. mcpx reads the envelope of each JSON-RPC message this way
// (id, method, params.name) and passes the rest on as it came, so a large
// result costs one scan instead of a decode and a re-encode.
//
// The scan follows the structure (strings, nesting) but does not validate
// scalars: Valid checks a whole value first, as encoding/json would.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrNotObject is returned for input that is not one JSON object.
var ErrNotObject = errors.New("not a JSON object")

// ErrNotArray is returned for input that is not one JSON array.
var ErrNotArray = errors.New("not a JSON array")

// Members calls f with the key and raw value of each top-level member of
// the object in b, in order, until f returns false. A key is compared by
// its bytes between the quotes; one written with escapes is decoded first.
func Members(b []byte, f func(key string, value []byte) bool) error {
	return members(b, func(q []byte, start, end int) bool { return f(keyString(q), b[start:end]) })
}

// Key is a member's key as written, quotes included.
type Key []byte

// Is reports whether the key reads as s. It copies nothing unless the key
// is written with escapes.
func (k Key) Is(s string) bool { return keyIs(k, s) }

// Scan is Members without turning keys into strings: a message's envelope
// is read this way twice per call, and the strings were most of a
// call's allocations in rawjson.
func Scan(b []byte, f func(key Key, value []byte) bool) error {
	return members(b, func(q []byte, start, end int) bool { return f(Key(q), b[start:end]) })
}

// ScanBounds is Scan with each value's bounds in b, b[start:end], for a
// caller that splices bytes in at a member's place rather than copy the
// object once per change.
func ScanBounds(b []byte, f func(key Key, start, end int) bool) error {
	return members(b, func(q []byte, start, end int) bool { return f(Key(q), start, end) })
}

// members is Members with the key as written, quotes included, and the
// value's bounds in b: comparing a key with keyIs costs no allocation.
func members(b []byte, f func(q []byte, start, end int) bool) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return ErrNotObject
		}
		end := skipString(b, i)
		if end < 0 {
			return ErrNotObject
		}
		q := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return ErrNotObject
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return ErrNotObject
		}
		if !f(q, i, vend) {
			return nil
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return ErrNotObject
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return trailing(b, i+1)
		default:
			return ErrNotObject
		}
	}
}

// Get returns the raw value of the top-level member key of the object in
// b (the last, if repeated, as encoding/json reads it), or nil when it
// has none.
func Get(b []byte, key string) ([]byte, error) {
	var v []byte
	err := members(b, func(q []byte, s, e int) bool {
		if keyIs(q, key) {
			v = b[s:e]
		}
		return true
	})
	return v, err
}

// GetEach is Get for several keys in one pass: it sets vals[i] to the
// raw value of the member keys[i] (the last, if repeated), nil where the
// object has none. vals must be as long as keys.
func GetEach(b []byte, keys []string, vals [][]byte) error {
	clear(vals)
	return members(b, func(q []byte, s, e int) bool {
		for i, k := range keys {
			if keyIs(q, k) {
				vals[i] = b[s:e]
				break
			}
		}
		return true
	})
}

// Replace returns a copy of the object in b with the value of its
// top-level member key (the last, if repeated) replaced by value, every
// other byte as it was; found is false, and b returned, when there is no
// such member.
func Replace(b []byte, key string, value []byte) (out []byte, found bool, err error) {
	start, end := -1, -1
	err = members(b, func(q []byte, s, e int) bool {
		if keyIs(q, key) {
			start, end = s, e
		}
		return true
	})
	if err != nil || start < 0 {
		return b, false, err
	}
	out = make([]byte, 0, len(b)-(end-start)+len(value))
	out = append(out, b[:start]...)
	out = append(out, value...)
	return append(out, b[end:]...), true, nil
}

// Filter returns a copy of the object in b without the top-level members
// drop names, and how many members it kept. Kept members keep their bytes
// and their order.
func Filter(b []byte, drop func(Key) bool) (out []byte, kept int, err error) {
	return AppendFilter(make([]byte, 0, len(b)), b, drop)
}

// AppendFilter is Filter appending to dst, for a caller that writes the
// object into a message it is building rather than copy it twice. On an
// error dst is returned as it came.
func AppendFilter(dst, b []byte, drop func(Key) bool) (out []byte, kept int, err error) {
	out = append(dst, '{')
	err = Scan(b, func(k Key, v []byte) bool {
		if drop(k) {
			return true
		}
		if kept > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, k...), ':'), v...)
		kept++
		return true
	})
	if err != nil {
		return dst, 0, err
	}
	return append(out, '}'), kept, nil
}

// Set returns the object in b with its top-level member key set to value:
// replaced where it is, or added first. A nil b is taken as {}.
func Set(b []byte, key string, value []byte) ([]byte, error) {
	if b == nil {
		b = []byte("{}")
	}
	out, found, err := Replace(b, key, value)
	if err != nil || found {
		return out, err
	}
	open := skipSpace(b, 0) + 1
	empty := b[skipSpace(b, open)] == '}'
	out = make([]byte, 0, len(b)+len(key)+len(value)+4)
	out = append(out, b[:open]...)
	out = AppendString(out, key)
	out = append(out, ':')
	out = append(out, value...)
	if !empty {
		out = append(out, ',')
	}
	return append(out, b[open:]...), nil
}

// Elements calls f with the raw value of each element of the array in b,
// in order, until f returns false.
func Elements(b []byte, f func(value []byte) bool) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return ErrNotArray
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return end(b, i+1, ErrNotArray)
	}
	for {
		e := skipValue(b, i)
		if e < 0 {
			return ErrNotArray
		}
		if !f(b[i:e]) {
			return nil
		}
		i = skipSpace(b, e)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			return end(b, i+1, ErrNotArray)
		default:
			return ErrNotArray
		}
	}
}

// end returns err unless only space follows b[i-1].
func end(b []byte, i int, err error) error {
	if skipSpace(b, i) != len(b) {
		return err
	}
	return nil
}

func trailing(b []byte, i int) error { return end(b, i, ErrNotObject) }

// keyIs reports whether the quoted key q reads as key.
func keyIs(q []byte, key string) bool {
	inner := q[1 : len(q)-1]
	if len(inner) <= len(key) {
		// An escape is longer than what it stands for: a key written
		// with one reads as key only when it is longer. Most keys
		// compared are told here, in place, without a search for one
		// (only a match is searched, in case key itself has a '\').
		return string(inner) == key && bytes.IndexByte(inner, '\\') < 0
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		return false
	}
	return keyString(q) == key
}

// keyString returns a quoted key's text.
func keyString(q []byte) string {
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return string(inner)
	}
	return s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote), or -1 when it does not end.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		k += j
		n := 0
		for p := k - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		j = k + 1
	}
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if i == start {
				return -1
			}
			return i
		}
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// String decodes a raw JSON string value; ok is false for anything else.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// AppendString appends s to b as a JSON string. Names and tokens are
// nearly always printable ASCII, which is copied as it is; anything else
// is encoded by encoding/json. (strconv.Quote is Go syntax: its \x escapes
// are not JSON.)
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
