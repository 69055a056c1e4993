package aggregator

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/config"
)

// bigSource is a source with one tool, big, that answers 5 MB: text by
// default, an image with {"as":"image"}. It returns the source and the
// bytes each answer holds.
func bigSource(tb testing.TB) (src *fakeSource, text, image []byte) {
	tb.Helper()
	text = []byte(strings.Repeat("line of \"text\"\twith é and €\n", 5<<20/30))
	image = make([]byte, 5<<20)
	for i := range image {
		image[i] = byte(i * 11)
	}
	q, _ := json.Marshal(string(text))
	textResult := `{"content":[{"type":"text","text":` + string(q) + `}]}`
	imageResult := `{"content":[{"type":"image","mimeType":"image/png","data":"` + base64.StdEncoding.EncodeToString(image) + `"}]}`
	src = &fakeSource{name: "big", tools: raws(tb, toolJSON("big"))}
	src.setRequest(func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "tools/call" {
			return nil, fmt.Errorf("fake big: no %s", method)
		}
		if bytes.Contains(params, []byte(`"image"`)) {
			return json.RawMessage(imageResult), nil
		}
		return json.RawMessage(textResult), nil
	})
	return src, text, image
}

var (
	keptURIInNote = regexp.MustCompile(`mcpx://results/[0-9a-f]{32}\?offset=\d+&length=\d+`)
	proxyCallIn   = regexp.MustCompile(`\{"action":"call","type":"resource","path":"[^"]*"\}`)
)

// toolResult is a CallToolResult, as far as these tests read it.
type toolResult struct {
	IsError bool
	Content []struct {
		Type, Text string
		Resource   struct{ MimeType, Text, Blob string }
	}
	Meta struct {
		Offset int64  `json:"mcpx/offset"`
		Total  int64  `json:"mcpx/total"`
		Next   string `json:"mcpx/next"`
	} `json:"_meta"`
}

func decodeResult(tb testing.TB, r rpcMsg) toolResult {
	tb.Helper()
	var res toolResult
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || len(res.Content) == 0 {
		tb.Fatalf("%.500s", r.line)
	}
	return res
}

// sliceBytes is a slice's text, or its blob decoded.
func sliceBytes(tb testing.TB, text, blob string) []byte {
	tb.Helper()
	if blob == "" {
		return []byte(text)
	}
	b, err := base64.StdEncoding.DecodeString(blob)
	if err != nil {
		tb.Fatalf("blob: %v", err)
	}
	return b
}

// TestCapNoteNamesTheWayIn: a 5 MB tool result over a 20 KiB cap is cut
// with a note naming the way its client reads the rest. Called directly,
// the note names resources/read, which reads one slice within the cap
// per request, mcpx/next giving the next, with no length or a huge one;
// called through the proxy tool, the note gives the exact arguments of
// the proxy call to make, and each answer (within the cap) the next call,
// until the last. Text and image alike, the slices join into the original
// byte for byte.
func TestCapNoteNamesTheWayIn(t *testing.T) {
	const limit = 20 << 10
	src, text, image := bigSource(t)
	cfg := &config.Config{Separator: "_", Expose: config.ExposeBoth, Limits: config.Limits{MaxResultBytes: limit}}
	c := serveConfig(t, cfg, nil, mem(src, "big"))
	c.initialize()
	id := 0
	call := func(method string, params any) rpcMsg {
		t.Helper()
		id++
		return c.call(id, method, params)
	}
	// read is call for a read of a kept result: its whole answer, as
	// sent, is within the cap.
	read := func(method string, params any) rpcMsg {
		t.Helper()
		r := call(method, params)
		if len(r.Result) > limit {
			t.Fatalf("%s %v: a result of %d bytes, over the cap of %d", method, params, len(r.Result), limit)
		}
		return r
	}

	for _, tc := range []struct {
		as   string
		want []byte
	}{
		{"text", text},
		{"image", image},
	} {
		// Directly: the note names resources/read.
		res := decodeResult(t, call("tools/call", map[string]any{"name": "big_big", "arguments": map[string]any{"as": tc.as}}))
		note := res.Content[len(res.Content)-1].Text
		uri := keptURIInNote.FindString(note)
		if !strings.Contains(note, "; read it with resources/read, in slices with offset and length in bytes, e.g. mcpx://results/") ||
			strings.Contains(note, "proxy") || uri == "" {
			t.Fatalf("%s, direct call: note %q, want it to name resources/read and a URI", tc.as, note)
		}
		var shown []byte
		if tc.as == "text" {
			shown = []byte(res.Content[0].Text)
		}
		base, _, _ := strings.Cut(uri, "?")
		for _, first := range []string{uri, base + fmt.Sprintf("?offset=%d", len(shown)), base + fmt.Sprintf("?offset=%d&length=1000000000000", len(shown))} {
			got := append([]byte(nil), shown...)
			for next := first; next != ""; {
				r := read("resources/read", map[string]any{"uri": next})
				var rr struct {
					Contents []struct{ Text, Blob string }
					Meta     struct {
						Offset int64  `json:"mcpx/offset"`
						Next   string `json:"mcpx/next"`
					} `json:"_meta"`
				}
				if r.Error != nil || json.Unmarshal(r.Result, &rr) != nil || len(rr.Contents) != 1 || rr.Meta.Offset != int64(len(got)) {
					t.Fatalf("%s: resources/read %s: %.300s", tc.as, next, r.line)
				}
				got = append(got, sliceBytes(t, rr.Contents[0].Text, rr.Contents[0].Blob)...)
				next = rr.Meta.Next
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("%s, read from %s with resources/read: %d bytes, differ from the %d of the original", tc.as, first, len(got), len(tc.want))
			}
		}

		// Through the proxy: the note gives the proxy call.
		res = decodeResult(t, call("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{
			"action": "call", "type": "tool", "path": "big_big", "args": map[string]any{"as": tc.as}}}))
		note = res.Content[len(res.Content)-1].Text
		args := proxyCallIn.FindString(note)
		if !strings.Contains(note, "; read it with the proxy tool, in slices with offset and length in bytes, each answer giving the next call, from {") ||
			strings.Contains(note, "resources/read") || args == "" {
			t.Fatalf("%s, call through proxy: note %q, want the proxy call to make and no resources/read", tc.as, note)
		}
		got := []byte(nil)
		if tc.as == "text" {
			got = []byte(res.Content[0].Text)
		}
		for calls := 1; args != ""; calls++ {
			res := decodeResult(t, read("tools/call", map[string]any{"name": "proxy", "arguments": json.RawMessage(args)}))
			if res.IsError || res.Content[0].Type != "resource" || res.Meta.Offset != int64(len(got)) {
				t.Fatalf("%s, proxy read %d (%s): %+v", tc.as, calls, args, res)
			}
			got = append(got, sliceBytes(t, res.Content[0].Resource.Text, res.Content[0].Resource.Blob)...)
			args = ""
			if len(res.Content) == 2 {
				args = proxyCallIn.FindString(res.Content[1].Text)
				if args == "" || !strings.Contains(res.Content[1].Text, fmt.Sprintf(" of %d in all.", len(tc.want))) {
					t.Fatalf("%s, proxy read %d: note %q, want the total and the next call", tc.as, calls, res.Content[1].Text)
				}
			}
		}
		if !bytes.Equal(got, tc.want) {
			t.Errorf("%s, read through proxy: %d bytes, differ from the %d of the original", tc.as, len(got), len(tc.want))
		}
	}
}
