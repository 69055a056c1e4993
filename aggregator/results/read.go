package results

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// IsURI reports whether uri names a kept result.
func IsURI(uri string) bool { return strings.HasPrefix(uri, URIPrefix) }

// Via is how the client that gets a cut result reads the rest back: the
// note on the cut names that way (see [Cut]).
type Via uint8

const (
	// ViaRead is resources/read of the URI: for a tools/call the client
	// made directly.
	ViaRead Via = iota
	// ViaProxy is the proxy tool's call of type resource with the URI as
	// its path: for a call made through the proxy tool, whose client may
	// have no resources/read.
	ViaProxy
)

// ReadURI answers a read of a kept result's URI,
// mcpx://results/ID?offset=N&length=M (both in bytes, both optional), for
// owner: a ReadResourceResult holding one slice of the part from offset,
// as text (a text item's, an embedded resource's text, or a
// structuredContent's JSON) or as a base64 blob (an image, audio or
// embedded blob), with the part's mimeType.
//
// The slice is at most length bytes (none given: to the end), and no
// more than lets the answer, with reserve bytes more that the caller adds
// around it (0 for resources/read itself), stay within the Cap the part
// was kept with: a blob's base64 and a text's escapes count as they are
// sent. It holds at least one character (three bytes of a blob), so that
// reading on always moves.
//
// _meta has mcpx/offset, mcpx/length (the slice's, which can be less than
// asked: read on from offset+length, never from the length asked),
// mcpx/total (the part's size) and, while more remains, mcpx/next: the
// URI of the next slice, the URI without its query followed by
// ?offset=N&length=M, where M is the most a slice can hold (the length
// asked, when less). A text slice never ends inside a character, so
// slices read in turn join into the part byte for byte.
func ReadURI(s *Store, owner, uri string, reserve int) (json.RawMessage, error) {
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
	data := sl.Data
	end := offset+int64(len(data)) == sl.Total // the slice reaches the part's end
	if !sl.Binary {
		if len(data) > 0 && !utf8.RuneStart(data[0]) {
			return nil, fmt.Errorf("%s: offset %d falls inside a character; read on from where the last slice ended", uri, offset)
		}
		if len(data) > 0 && !end && !utf8.FullRune(data) {
			// The length asked ends inside the first character: give
			// that one character whole.
			if sl, err = s.Read(owner, id, offset, utf8.UTFMax); err != nil {
				return nil, fmt.Errorf("%s: %w", uri, err)
			}
			_, size := utf8.DecodeRune(sl.Data)
			data = sl.Data[:size]
			end = offset+int64(size) == sl.Total
		}
	}

	field := `,"text":`
	if sl.Binary {
		field = `,"blob":`
	}
	size := len(data)*4/3 + len(uri) + 256 // a blob's base64, and the rest
	if sl.Cap > 0 {
		size = min(size, sl.Cap)
	}
	b := make([]byte, 0, size)
	b = append(b, `{"contents":[{"uri":`...)
	b = appendString(b, uri)
	b = append(b, `,"mimeType":`...)
	b = appendString(b, sl.MIMEType)
	b = append(b, field...)
	room := -1 // bytes the text or blob may take, quotes included; < 0: any
	if sl.Cap > 0 {
		longest := appendMeta(nil, math.MaxInt64, math.MaxInt64, math.MaxInt64, nextURI(id, math.MaxInt64, math.MaxInt64))
		room = max(sl.Cap-reserve-len(b)-len(longest), 0)
	}
	var n int
	var page int64 // the most a next slice holds; 0: to the end
	if sl.Binary {
		n = len(data)
		if room >= 0 {
			page = int64(max((room-2)/4*3, 3)) // base64 grows 4/3
			n = min(n, int(page))
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, data[:n])
		b = append(b, '"')
	} else {
		b, n = appendText(b, data, room, end)
		if room >= 0 {
			page = int64(max(room-2, utf8.UTFMax))
		}
	}
	if length > 0 && (page == 0 || length < page) {
		page = length
	}
	next := ""
	if after := offset + int64(n); after < sl.Total {
		next = nextURI(id, after, page)
	}
	b = appendMeta(b, offset, int64(n), sl.Total, next)
	return b, nil
}

// nextURI is the URI of the slice of the part id from offset, of length
// bytes (0: to the end).
func nextURI(id string, offset, length int64) string {
	u := URIPrefix + id + "?offset=" + strconv.FormatInt(offset, 10)
	if length > 0 {
		u += "&length=" + strconv.FormatInt(length, 10)
	}
	return u
}

// appendMeta closes the answer ReadURI began: the contents, then _meta.
func appendMeta(b []byte, offset, length, total int64, next string) []byte {
	b = append(b, `}],"_meta":{"mcpx/offset":`...)
	b = strconv.AppendInt(b, offset, 10)
	b = append(b, `,"mcpx/length":`...)
	b = strconv.AppendInt(b, length, 10)
	b = append(b, `,"mcpx/total":`...)
	b = strconv.AppendInt(b, total, 10)
	if next != "" {
		b = append(b, `,"mcpx/next":`...)
		b = appendString(b, next)
	}
	return append(b, "}}"...)
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

// NewOwner returns an unguessable owner key for one session.
func NewOwner() (string, error) { return newID() }
