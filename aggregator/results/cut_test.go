package results

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

var idInNote = regexp.MustCompile(URIPrefix + `([0-9a-f]{32})`)

type cutResult struct {
	Content []struct {
		Type, Text, Data string
	}
	StructuredContent json.RawMessage
}

// cut cuts raw under max for owner "o", for a client that reads back
// with resources/read, and decodes the result.
func cut(t *testing.T, s *Store, raw string, max int) cutResult {
	t.Helper()
	out, err := Cut(s, "o", json.RawMessage(raw), max, ViaRead)
	if err != nil {
		t.Fatal(err)
	}
	var r cutResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return r
}

// kept reads back the part the note names, whole, in slices of the cap
// it was kept with.
func kept(t *testing.T, s *Store, note string) Slice {
	t.Helper()
	m := idInNote.FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("note %q names no URI", note)
	}
	sl, err := s.Read("o", m[1], 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sl.Cap <= 0 || len(sl.Data) > sl.Cap {
		t.Errorf("part kept with cap %d, read %d bytes at once", sl.Cap, len(sl.Data))
	}
	sl.Data = readAll(t, s, "o", m[1], 0)
	return sl
}

// TestCutParts: each kind of part past the cap is taken out and kept
// whole under its own ID, with its mimeType; what fits stays as it was.
func TestCutParts(t *testing.T) {
	s := NewStore(&Options{Dir: t.TempDir()})
	defer s.Close()
	big := strings.Repeat("line of text\n", 1000) // 13000 bytes
	png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 3000)
	b64 := base64.StdEncoding.EncodeToString(png)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }

	r := cut(t, s, `{"content":[{"type":"image","mimeType":"image/png","data":`+q(b64)+`},{"type":"text","text":"small"}]}`, 4096)
	if len(r.Content) != 2 || r.Content[0].Type != "text" || !strings.Contains(r.Content[0].Text, "an image (image/png, 12000 bytes) is not shown") || r.Content[1].Text != "small" {
		t.Fatalf("image: %+v, want a note in its place and the text after it", r.Content)
	}
	if sl := kept(t, s, r.Content[0].Text); !sl.Binary || sl.MIMEType != "image/png" || !bytes.Equal(sl.Data, png) {
		t.Errorf("image kept as %v %q, %d bytes", sl.Binary, sl.MIMEType, len(sl.Data))
	}

	r = cut(t, s, `{"content":[{"type":"audio","mimeType":"audio/wav","data":"AAAA"}]}`, 4096)
	if len(r.Content) != 1 || r.Content[0].Type != "audio" || r.Content[0].Data != "AAAA" {
		t.Errorf("small audio: %+v, want it as it was", r.Content)
	}

	sc := `{"fill":` + q(big) + `}`
	r = cut(t, s, `{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":`+sc+`}`, 4096)
	if r.StructuredContent != nil || len(r.Content) != 2 || r.Content[0].Text != "see structuredContent" ||
		!strings.Contains(r.Content[1].Text, "structuredContent (") {
		t.Fatalf("structuredContent: %+v, want it moved and a note last", r)
	}
	if sl := kept(t, s, r.Content[1].Text); sl.Binary || sl.MIMEType != "application/json" || string(sl.Data) != sc {
		t.Errorf("structuredContent kept as %v %q, %d bytes, want the JSON as sent", sl.Binary, sl.MIMEType, len(sl.Data))
	}

	// A structuredContent within the cap stays; the text gets what is left.
	r = cut(t, s, `{"content":[{"type":"text","text":`+q(big)+`}],"structuredContent":{"n":1}}`, 4096)
	if string(r.StructuredContent) != `{"n":1}` || len(r.Content) != 2 || len(r.Content[0].Text) > 4096-len(`{"n":1}`) {
		t.Errorf("small structuredContent: %s, text %d bytes; want it kept and the text within the rest", r.StructuredContent, len(r.Content[0].Text))
	}
	if sl := kept(t, s, r.Content[1].Text); string(sl.Data) != big || sl.MIMEType != "text/plain" {
		t.Errorf("text kept as %q, %d bytes", sl.MIMEType, len(sl.Data))
	}

	r = cut(t, s, `{"content":[{"type":"resource","resource":{"uri":"file:///x","mimeType":"text/markdown","text":`+q(big)+`}},`+
		`{"type":"resource","resource":{"uri":"file:///y","blob":`+q(b64)+`}}]}`, 4096)
	if len(r.Content) != 2 || !strings.Contains(r.Content[0].Text, "the embedded resource file:///x (text/markdown, 13000 bytes)") ||
		!strings.Contains(r.Content[1].Text, "the embedded resource file:///y (application/octet-stream, 12000 bytes)") {
		t.Fatalf("embedded resources: %+v, want a note in place of each", r.Content)
	}
	if sl := kept(t, s, r.Content[0].Text); sl.Binary || sl.MIMEType != "text/markdown" || string(sl.Data) != big {
		t.Errorf("embedded text kept as %v %q, %d bytes", sl.Binary, sl.MIMEType, len(sl.Data))
	}
	if sl := kept(t, s, r.Content[1].Text); !sl.Binary || !bytes.Equal(sl.Data, png) {
		t.Errorf("embedded blob kept as %v, %d bytes", sl.Binary, len(sl.Data))
	}
}

// TestCutNotKept: a part larger than the whole store is cut all the same,
// its note saying it was not kept.
func TestCutNotKept(t *testing.T) {
	s := NewStore(&Options{MaxMemory: 1000, MaxDisk: -1})
	defer s.Close()
	big := strings.Repeat("line of text\n", 1000)
	b, _ := json.Marshal(big)
	r := cut(t, s, `{"content":[{"type":"text","text":`+string(b)+`}]}`, 2048)
	if len(r.Content) != 2 || len(r.Content[0].Text) > 2048 || !strings.Contains(r.Content[1].Text, "it was not kept: 13000 bytes is larger than the result store") ||
		strings.Contains(r.Content[1].Text, URIPrefix) {
		t.Errorf("%+v, want the text cut and a note saying it was not kept", r.Content)
	}
}

func TestReadURIBlob(t *testing.T) {
	s := NewStore(nil)
	defer s.Close()
	data := []byte{0, 1, 2, 0xff, 0xfe, 3, 4}
	id, _ := s.Put("o", Kept{MIMEType: "audio/wav", Binary: true, Data: data})
	var got []byte
	for off := 0; off < len(data); off += 3 {
		raw, err := ReadURI(s, "o", URIPrefix+id+"?offset="+string(rune('0'+off))+"&length=3", 0)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Contents []struct{ MimeType, Blob, Text string }
		}
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Contents) != 1 || r.Contents[0].MimeType != "audio/wav" || r.Contents[0].Text != "" {
			t.Fatalf("%s: %v", raw, err)
		}
		b, err := base64.StdEncoding.DecodeString(r.Contents[0].Blob)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("blob read back as %v, want %v", got, data)
	}
}

// proxyArgsInNote finds the proxy call a note gives.
var proxyArgsInNote = regexp.MustCompile(`\{"action":"call","type":"resource","path":"[^"]*"\}`)

// TestCutNoteVia: the note on a cut names the way its client reads the
// rest: resources/read after a direct call; after a call through the
// proxy tool, the exact arguments of the proxy call that reads on from
// where the text shown ends. Read that way, slice after slice, within the
// cap, the shown text and the slices join into the original, a text and
// an image alike.
func TestCutNoteVia(t *testing.T) {
	s := NewStore(&Options{Dir: t.TempDir()})
	defer s.Close()
	const limit = 20 << 10
	text := bigText(5 << 20)
	png := make([]byte, 5<<20)
	for i := range png {
		png[i] = byte(i * 13)
	}
	q := func(b []byte) string { j, _ := json.Marshal(string(b)); return string(j) }
	textResult := `{"content":[{"type":"text","text":` + q(text) + `}]}`
	imageResult := `{"content":[{"type":"image","mimeType":"image/png","data":"` + base64.StdEncoding.EncodeToString(png) + `"}]}`

	for _, tc := range []struct {
		name, raw string
		want      []byte
	}{
		{"text", textResult, text},
		{"image", imageResult, png},
	} {
		out, err := Cut(s, "o", json.RawMessage(tc.raw), limit, ViaRead)
		if err != nil {
			t.Fatal(err)
		}
		var r cutResult
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		note := r.Content[len(r.Content)-1].Text
		if !strings.Contains(note, "; read it with resources/read, in slices with offset and length in bytes, e.g. "+URIPrefix) ||
			strings.Contains(note, "proxy") {
			t.Errorf("%s, direct: note %q, want it to name resources/read and not the proxy", tc.name, note)
		}

		out, err = Cut(s, "o", json.RawMessage(tc.raw), limit, ViaProxy)
		if err != nil {
			t.Fatal(err)
		}
		r = cutResult{}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		note = r.Content[len(r.Content)-1].Text
		call := proxyArgsInNote.FindString(note)
		if !strings.Contains(note, "; read it with the proxy tool, in slices with offset and length in bytes, each answer giving the next call, from {") ||
			call == "" || strings.Contains(note, "resources/read") {
			t.Fatalf("%s, through proxy: note %q, want the proxy call's arguments and no resources/read", tc.name, note)
		}
		var args struct{ Action, Type, Path string }
		if err := json.Unmarshal([]byte(call), &args); err != nil || args.Action != "call" || args.Type != "resource" {
			t.Fatalf("%s, through proxy: arguments %s: %+v, %v", tc.name, call, args, err)
		}
		var shown []byte
		if tc.name == "text" {
			shown = []byte(r.Content[0].Text)
		}
		rest, _ := readOn(t, s, args.Path, 700, limit)
		if got := append(shown, rest...); !bytes.Equal(got, tc.want) {
			t.Errorf("%s, through proxy: %d bytes shown and %d read on, differ from the %d of the original", tc.name, len(shown), len(rest), len(tc.want))
		}
	}
}
