package proxytool

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/aggregator/results"
)

// storeCatalog is the fake catalog with mcpx's result store behind its
// Keeper, as the aggregator has it, for one session "o".
type storeCatalog struct {
	*fakeCatalog
	s *results.Store
}

func (c storeCatalog) Kept(uri string) bool { return results.IsURI(uri) }

func (c storeCatalog) ReadKept(_ context.Context, uri string, reserve int) (json.RawMessage, error) {
	return results.ReadURI(c.s, "o", uri, reserve)
}

// readOnArgs finds the proxy call a read-on note gives.
var readOnArgs = regexp.MustCompile(`Read on with the proxy tool: (\{.*\})\]$`)

// TestReadKeptWithinCap: a kept result of 5 MB read through the proxy
// with no length (or a huge one) comes back one slice per call, each
// whole answer within the cap the result was cut under; each answer but
// the last ends with a note giving the next call's exact arguments, and
// the slices read by following them join into the result byte for byte,
// a text (with escapes and characters of every width) and a blob alike.
func TestReadKeptWithinCap(t *testing.T) {
	s := results.NewStore(&results.Options{Dir: t.TempDir()})
	defer s.Close()
	const limit = 20 << 10
	text := []byte(strings.Repeat("a line with \"quotes\", a tab\tand é, € and 𝄞\n", 5<<20/48))
	blob := make([]byte, 5<<20)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	p := New(storeCatalog{newFake(t), s})
	for _, tc := range []struct {
		name string
		k    results.Kept
	}{
		{"text", results.Kept{MIMEType: "text/plain", Data: text, Cap: limit}},
		{"blob", results.Kept{MIMEType: "image/png", Binary: true, Data: blob, Cap: limit}},
	} {
		id, err := s.Put("o", tc.k)
		if err != nil {
			t.Fatal(err)
		}
		for _, query := range []string{"", "?length=1000000000000"} {
			args := mustMarshal(t, map[string]string{"action": "call", "type": "resource", "path": results.URIPrefix + id + query})
			var got []byte
			calls := 0
			for args != nil {
				calls++
				raw := p.Call(context.Background(), json.RawMessage(`{"name":"proxy","arguments":`+string(args)+`}`))
				if len(raw) > limit {
					t.Fatalf("%s%s, call %d: the answer is %d bytes, over the cap of %d", tc.name, query, calls, len(raw), limit)
				}
				var r struct {
					IsError bool
					Content []struct {
						Type     string
						Text     string
						Resource struct{ MimeType, Text, Blob string }
					}
					Meta map[string]any `json:"_meta"`
				}
				if err := json.Unmarshal(raw, &r); err != nil || r.IsError || len(r.Content) == 0 || r.Content[0].Type != "resource" {
					t.Fatalf("%s%s, call %d: %.300s (%v)", tc.name, query, calls, raw, err)
				}
				res := r.Content[0].Resource
				slice := []byte(res.Text)
				if tc.k.Binary {
					if slice, err = base64.StdEncoding.DecodeString(res.Blob); err != nil {
						t.Fatal(err)
					}
				}
				if res.MimeType != tc.k.MIMEType || len(slice) == 0 || r.Meta["mcpx/offset"] != float64(len(got)) {
					t.Fatalf("%s%s, call %d: %s slice of %d bytes, _meta %v; want %s from offset %d", tc.name, query, calls, res.MimeType, len(slice), r.Meta, tc.k.MIMEType, len(got))
				}
				got = append(got, slice...)
				args = nil
				switch len(r.Content) {
				case 1:
					if len(got) != len(tc.k.Data) {
						t.Fatalf("%s%s, call %d: no note on reading on after %d bytes of %d", tc.name, query, calls, len(got), len(tc.k.Data))
					}
				case 2:
					m := readOnArgs.FindStringSubmatch(r.Content[1].Text)
					if m == nil || !strings.Contains(r.Content[1].Text, fmt.Sprintf(" of %d in all.", len(tc.k.Data))) {
						t.Fatalf("%s%s, call %d: note %q, want the total and the next call", tc.name, query, calls, r.Content[1].Text)
					}
					args = []byte(m[1])
				default:
					t.Fatalf("%s%s, call %d: %d content items, want the slice and at most a note", tc.name, query, calls, len(r.Content))
				}
			}
			if !bytes.Equal(got, tc.k.Data) {
				t.Errorf("%s%s: read back %d bytes, differ from the %d kept", tc.name, query, len(got), len(tc.k.Data))
			}
			if calls < len(tc.k.Data)/limit || calls > len(tc.k.Data)/(limit/2) {
				t.Errorf("%s%s: %d calls for %d bytes under a cap of %d", tc.name, query, calls, len(tc.k.Data), limit)
			}
		}
	}
}

func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestKeptReserve: what readKept adds to the Keeper's answer is what it
// reserves, its numbers at their longest, whatever the path.
func TestKeptReserve(t *testing.T) {
	for _, path := range []string{results.URIPrefix + "0123456789abcdef0123456789abcdef", results.URIPrefix + "x?offset=1&length=2&odd=\"<é>\""} {
		raw := json.RawMessage(`{"contents":[{"uri":"u","text":"t"}],"_meta":{"mcpx/offset":9223372036854775807,"mcpx/length":9223372036854775807,"mcpx/total":9223372036854775807,"mcpx/next":"` +
			strings.SplitN(path, "?", 2)[0] + `?offset=9223372036854775807&length=9223372036854775807"}}`)
		k := oneAnswer{raw}
		got := New(k).Call(context.Background(), json.RawMessage(`{"name":"proxy","arguments":`+string(mustMarshal(t, map[string]string{"action": "call", "type": "resource", "path": path}))+`}`))
		if want := len(raw) + keptReserve(path); len(got) != want {
			t.Errorf("%s: answer of %d bytes for %d from the Keeper, want %d (reserve %d):\n%s", path, len(got), len(raw), want, keptReserve(path), got)
		}
	}
}

// oneAnswer is a Keeper that answers every read with raw.
type oneAnswer struct{ raw json.RawMessage }

func (oneAnswer) Items(Kind) []Item                { return nil }
func (oneAnswer) Lookup(Kind, string) (Item, bool) { return Item{}, false }
func (oneAnswer) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}
func (oneAnswer) Kept(string) bool { return true }
func (o oneAnswer) ReadKept(context.Context, string, int) (json.RawMessage, error) {
	return o.raw, nil
}
