package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
)

// The relay routes frames of megabytes (screenshots, page trees) by a few
// small members. Decoding a whole frame to find them, and re-encoding it
// to swap its id, cost 1.8x a byte-copy relay on a 1 MiB answer
// (BenchmarkForwardVsCopyRelay); so frames are scanned once for the spans
// of their top-level members, only the small ones are decoded, and the id
// is spliced into the bytes. The relay does not validate what it passes
// on: each end parses what it receives.

var errNotObject = errors.New("not a JSON object")

// member is one top-level member of a JSON object: its key and where its
// value lies in the object's bytes.
type member struct {
	key        string
	start, end int
}

// members returns the top-level members of the JSON object in data, in
// order, in one pass without copying values.
func members(data []byte) ([]member, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errNotObject
	}
	var out []member
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return out, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, errNotObject
		}
		ke, err := skipString(data, i)
		if err != nil {
			return nil, err
		}
		key := string(data[i+1 : ke-1])
		if bytes.IndexByte(data[i:ke], '\\') >= 0 {
			if json.Unmarshal(data[i:ke], &key) != nil {
				return nil, errNotObject
			}
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return nil, errNotObject
		}
		vs := skipSpace(data, i+1)
		ve, err := skipValue(data, vs)
		if err != nil {
			return nil, err
		}
		out = append(out, member{key, vs, ve})
		i = skipSpace(data, ve)
		if i >= len(data) {
			return nil, errNotObject
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return out, nil
		default:
			return nil, errNotObject
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at data[i].
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); {
		k := bytes.IndexAny(data[j:], `"\`)
		if k < 0 {
			break
		}
		j += k
		if data[j] == '\\' {
			j += 2
			continue
		}
		return j + 1, nil
	}
	return 0, errors.New("unterminated string")
}

// skipValue returns the index after the value that starts at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errNotObject
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated object or array")
	}
	j := i
loop:
	for ; j < len(data); j++ {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			break loop
		}
	}
	if j == i {
		return 0, errNotObject
	}
	return j, nil
}

// decode reads the members the relay routes by from a frame.
func decode(data []byte) (message, []member, error) {
	ms, err := members(data)
	if err != nil {
		return message{}, nil, err
	}
	var m message
	for _, f := range ms {
		v := data[f.start:f.end]
		switch f.key {
		case "id":
			m.ID = json.RawMessage(v)
		case "method":
			err = json.Unmarshal(v, &m.Method)
		case "params":
			m.Params = json.RawMessage(v)
		case "result":
			m.Result = json.RawMessage(v)
		case "error":
			m.Error = json.RawMessage(v)
		case "connectionId":
			err = json.Unmarshal(v, &m.ConnectionID)
		}
		if err != nil {
			return message{}, nil, errNotObject
		}
	}
	return m, ms, nil
}

// rewrite returns the JSON object data with the members in set replaced
// in place (or added at the end) and those in drop removed; every other
// byte is copied as it was.
func rewrite(data json.RawMessage, set map[string]json.RawMessage, drop ...string) (json.RawMessage, error) {
	ms, err := members(data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(data)+64)
	out = append(out, '{')
	done := map[string]bool{}
	put := func(key string, v []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, v...)
	}
	for _, f := range ms {
		switch {
		case slices.Contains(drop, f.key) || done[f.key]:
		case set[f.key] != nil:
			put(f.key, set[f.key])
			done[f.key] = true
		default:
			put(f.key, data[f.start:f.end])
			done[f.key] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if !done[k] {
			put(k, set[k])
		}
	}
	return append(out, '}'), nil
}
