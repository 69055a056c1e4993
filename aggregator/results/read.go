package results

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// IsURI reports whether uri names a kept result.
func IsURI(uri string) bool { return strings.HasPrefix(uri, URIPrefix) }

// ReadURI answers resources/read of a kept result's URI,
// mcpx://results/ID?offset=N&length=M (both in bytes, both optional), for
// owner: a ReadResourceResult with the slice as text (a text item or a
// structuredContent's JSON) or as a base64 blob (an image or audio), with
// the part's mimeType, and its offset, length and the whole part's size
// in _meta. A text slice never ends inside a character, so reading on
// from offset+length gives the part back byte for byte.
func ReadURI(s *Store, owner, uri string) (json.RawMessage, error) {
	id, query, _ := strings.Cut(strings.TrimPrefix(uri, URIPrefix), "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	offset, err := queryInt(q, "offset")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	length, err := queryInt(q, "length")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	sl, err := s.Read(owner, id, offset, length)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	content := map[string]string{"uri": uri, "mimeType": sl.MIMEType}
	data := sl.Data
	if sl.Binary {
		content["blob"] = base64.StdEncoding.EncodeToString(data)
	} else {
		if len(data) > 0 && !utf8.RuneStart(data[0]) {
			return nil, fmt.Errorf("%s: offset %d falls inside a character; read on from where the last slice ended", uri, offset)
		}
		if offset+int64(len(data)) < sl.Total {
			data = trimPartialRune(data)
		}
		content["text"] = string(data)
	}
	return marshal(map[string]any{
		"contents": []map[string]string{content},
		"_meta":    map[string]int64{"mcpx/offset": offset, "mcpx/length": int64(len(data)), "mcpx/total": sl.Total},
	})
}

// queryInt reads a whole number of at least 0 from q; absent is 0.
func queryInt(q url.Values, key string) (int64, error) {
	v := q.Get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q: want a whole number of bytes, at least 0", key, v)
	}
	return n, nil
}

// trimPartialRune drops a character cut short at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// NewOwner returns an unguessable owner key for one session.
func NewOwner() (string, error) { return newID() }
