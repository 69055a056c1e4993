package results

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// readAnswer is a ReadURI answer, decoded.
type readAnswer struct {
	Contents []struct{ URI, MimeType, Text, Blob string }
	Meta     struct {
		Offset int64  `json:"mcpx/offset"`
		Length int64  `json:"mcpx/length"`
		Total  int64  `json:"mcpx/total"`
		Next   string `json:"mcpx/next"`
	} `json:"_meta"`
}

// readOn reads uri with ReadURI, then each answer's mcpx/next in turn,
// checking that every answer with reserve bytes more is within limit and
// says where its slice is; it returns the slices joined (from the first
// one's offset to the end) and how many reads it took.
func readOn(t *testing.T, s *Store, uri string, reserve, limit int) ([]byte, int) {
	t.Helper()
	var got []byte
	var from int64
	for reads := 1; ; reads++ {
		raw, err := ReadURI(s, "o", uri, reserve)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(raw)+reserve > limit {
			t.Fatalf("read %s: %d bytes and %d reserved, over the cap of %d", uri, len(raw), reserve, limit)
		}
		var a readAnswer
		if err := json.Unmarshal(raw, &a); err != nil || len(a.Contents) != 1 {
			t.Fatalf("read %s: %.300s: %v", uri, raw, err)
		}
		slice := []byte(a.Contents[0].Text)
		if a.Contents[0].Blob != "" {
			if slice, err = base64.StdEncoding.DecodeString(a.Contents[0].Blob); err != nil {
				t.Fatal(err)
			}
		}
		if reads == 1 {
			from = a.Meta.Offset
		}
		at := from + int64(len(got))
		if a.Meta.Offset != at || a.Meta.Length != int64(len(slice)) || len(slice) == 0 {
			t.Fatalf("read %s: _meta says %d bytes from %d, the slice is %d bytes read from %d", uri, a.Meta.Length, a.Meta.Offset, len(slice), at)
		}
		got = append(got, slice...)
		if a.Meta.Next == "" {
			if at+int64(len(slice)) != a.Meta.Total {
				t.Fatalf("read %s: no next slice after %d bytes of %d", uri, at+int64(len(slice)), a.Meta.Total)
			}
			return got, reads
		}
		if want := fmt.Sprintf("?offset=%d&length=", at+int64(len(slice))); !strings.Contains(a.Meta.Next, want) {
			t.Fatalf("read %s: next %q, want it from offset %d", uri, a.Meta.Next, at+int64(len(slice)))
		}
		uri = a.Meta.Next
	}
}

// bigText is n bytes of text whose JSON encoding is far from its length:
// lines of ASCII, quotes and backslashes, tabs, control characters, two-,
// three- and four-byte characters, and U+2028.
func bigText(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"plain words ", "\"quoted\" ", `C:\path\ `, "\t", "\n", "\x01\x1f", "é", "€uro", "𝄞", "\u2028", "<&>"}
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	out := b.Bytes()[:n]
	for !utf8.Valid(out) {
		out = out[:len(out)-1]
	}
	return out
}

// TestReadURIWithinCap: a kept part of 5 MB, read with no length or a
// huge one, comes back one slice per read, each answer (with what the
// caller reserves) within the cap the part was kept with, a blob's base64
// and a text's escapes counted; following mcpx/next from the first read
// joins the slices into the part byte for byte.
func TestReadURIWithinCap(t *testing.T) {
	s := NewStore(&Options{Dir: t.TempDir()})
	defer s.Close()
	const limit = 20 << 10
	text := bigText(5 << 20)
	blob := make([]byte, 5<<20)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		k    Kept
	}{
		{"text", Kept{MIMEType: "text/plain", Data: text, Cap: limit}},
		{"blob", Kept{MIMEType: "image/png", Binary: true, Data: blob, Cap: limit}},
	} {
		id, err := s.Put("o", tc.k)
		if err != nil {
			t.Fatal(err)
		}
		for _, query := range []string{"", "?offset=0", "?length=1000000000000"} {
			for _, reserve := range []int{0, 700} {
				got, reads := readOn(t, s, URIPrefix+id+query, reserve, limit)
				if !bytes.Equal(got, tc.k.Data) {
					t.Errorf("%s%s, %d reserved: read back %d bytes, differ from the %d kept", tc.name, query, reserve, len(got), len(tc.k.Data))
				}
				// Slices as large as the cap allows: for a blob three
				// quarters of it, for this text (its JSON about 1.4
				// times as long) well over half.
				if most := len(tc.k.Data) / (limit / 2); reads > most {
					t.Errorf("%s%s, %d reserved: %d reads, want at most %d", tc.name, query, reserve, reads, most)
				}
			}
		}
	}
}

// TestReadURILength: a length asked under the cap is kept, in the slice
// and in mcpx/next; a length ending inside a character gives that
// character whole; the last slice has no mcpx/next; an offset inside a
// character is refused.
func TestReadURILength(t *testing.T) {
	s := NewStore(nil)
	defer s.Close()
	id, _ := s.Put("o", Kept{MIMEType: "text/plain", Data: []byte("ab€cd"), Cap: 4096})
	read := func(query string) readAnswer {
		t.Helper()
		raw, err := ReadURI(s, "o", URIPrefix+id+query, 0)
		if err != nil {
			t.Fatal(err)
		}
		var a readAnswer
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, tc := range []struct {
		query, text, next string
	}{
		{"?length=2", "ab", URIPrefix + id + "?offset=2&length=2"},
		{"?offset=2&length=1", "€", URIPrefix + id + "?offset=5&length=1"},
		{"?offset=2&length=4", "€c", URIPrefix + id + "?offset=6&length=4"},
		{"?offset=5", "cd", ""},
		{"?offset=7", "", ""},
	} {
		if a := read(tc.query); a.Contents[0].Text != tc.text || a.Meta.Next != tc.next || a.Meta.Total != 7 {
			t.Errorf("%s: %q, next %q, total %d; want %q, next %q, total 7", tc.query, a.Contents[0].Text, a.Meta.Next, a.Meta.Total, tc.text, tc.next)
		}
	}
	if _, err := ReadURI(s, "o", URIPrefix+id+"?offset=3", 0); err == nil || !strings.Contains(err.Error(), "inside a character") {
		t.Errorf("offset inside a character: %v", err)
	}
}

// TestAppendText: the JSON string appendText writes is encoding/json's
// (without HTML escapes) for the text it took, never longer than room,
// and ends on a character.
func TestAppendText(t *testing.T) {
	text := bigText(64 << 10)
	text = append(text, 0xff, 'x', 0xe2, 0x82) // invalid UTF-8, then a character cut short
	for _, room := range []int{-1, 0, 1, 2, 3, 7, 100, 4096, 50_000} {
		for _, end := range []bool{true, false} {
			got, n := appendText(nil, text, room, end)
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(string(text[:n])); err != nil {
				t.Fatal(err)
			}
			if string(got) != strings.TrimSuffix(want.String(), "\n") {
				t.Errorf("room %d, end %v: %d bytes taken, written\n%.200q\nwant\n%.200q", room, end, n, got, want.String())
			}
			if n == 0 || room >= 0 && len(got) > room && n > utf8.UTFMax {
				t.Errorf("room %d, end %v: took %d bytes into %d", room, end, n, len(got))
			}
			if room < 0 && (end && n != len(text) || !end && n != len(text)-2) {
				t.Errorf("room %d, end %v: took %d bytes of %d", room, end, n, len(text))
			}
		}
	}
}
