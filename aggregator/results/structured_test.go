package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validates reports whether v is valid under schema, as a client that
// checks a tool's outputSchema would find.
func validates(t *testing.T, schema, v []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("out.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("out.json")
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		t.Fatalf("%.200s: %v", v, err)
	}
	return sch.Validate(inst)
}

// TestCutToolStructured: a tool with an outputSchema keeps its
// structuredContent: its long strings end early at a line's end where
// the schema allows it, so that the result fits and still validates; one
// the schema does not let be shorter stays whole; either way the whole
// is kept and a note names it. An error result, and a tool without an
// outputSchema, have a large structuredContent moved out as before.
func TestCutToolStructured(t *testing.T) {
	s := NewStore(&Options{Dir: t.TempDir()})
	defer s.Close()
	const limit = 8 << 10
	text := strings.Repeat("a line of the file, with \"quotes\" and \\ too\n", 2000) // 90 kB
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	// The filesystem server's read_text_file, as zod writes its schema.
	readText := `{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`
	fileResult := `{"content":[{"type":"text","text":` + q(text) + `}],"structuredContent":{"content":` + q(text) + `}}`

	for _, tc := range []struct {
		name, schema, raw string
		cut               bool // structuredContent ends early (else whole)
		// field is the member of structuredContent (a path of keys and
		// indexes) that holds the text.
		field []any
	}{
		{"read_text_file", readText, fileResult, true, []any{"content"}},
		{"no type, and a short string beside", `{"type":"object"}`,
			`{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":{"path":"/tmp/x","body":` + q(text) + `}}`, true, []any{"body"}},
		{"in an array of objects", `{"type":"object","properties":{"files":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"text":{"type":["string","null"],"maxLength":1000000}}}}}}`,
			`{"content":[],"structuredContent":{"files":[{"name":"a","text":` + q(text) + `},{"name":"b","text":` + q(text) + `}]}}`, true, []any{"files", 1.0, "text"}},
		{"a pattern", `{"type":"object","properties":{"content":{"type":"string","pattern":"^a"}}}`, fileResult, false, []any{"content"}},
		{"anyOf", `{"type":"object","properties":{"content":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`, fileResult, false, []any{"content"}},
		{"a $ref", `{"type":"object","properties":{"content":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`, fileResult, false, []any{"content"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := CutTool(s, "o", json.RawMessage(tc.raw), limit, ViaRead, json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Content []struct{ Type, Text string }
				SC      json.RawMessage `json:"structuredContent"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("%.300s: %v", out, err)
			}
			if r.SC == nil {
				t.Fatalf("no structuredContent in %.300s", out)
			}
			if err := validates(t, []byte(tc.schema), r.SC); err != nil {
				t.Errorf("the structuredContent does not validate: %v", err)
			}
			var sc any
			json.Unmarshal(r.SC, &sc)
			for _, k := range tc.field {
				switch k := k.(type) {
				case string:
					sc = sc.(map[string]any)[k]
				case float64:
					sc = sc.([]any)[int(k)]
				}
			}
			got, _ := sc.(string)
			var note string
			for _, c := range r.Content {
				if strings.Contains(c.Text, "structuredContent (") {
					note = c.Text
				}
			}
			switch {
			case note == "":
				t.Fatalf("no note on the structuredContent in %+v", r.Content)
			case tc.cut && (len(got) == 0 || len(got) >= len(text) || !strings.HasSuffix(got, "\n") || !strings.HasPrefix(text, got)):
				t.Errorf("the text in structuredContent: %d bytes, want a start of the %d ending a line", len(got), len(text))
			case tc.cut && len(out) > limit+2048:
				t.Errorf("the cut result is %d bytes, want about the %d of the cap", len(out), limit)
			case tc.cut && !strings.Contains(note, "was cut to fit: its longest strings end early"):
				t.Errorf("note %q does not say the structuredContent was cut", note)
			case !tc.cut && (got != text || !strings.Contains(note, "none of its strings can safely end early")):
				t.Errorf("structuredContent's text %d bytes, note %q; want it whole, and said so", len(got), note)
			}
			var whole struct {
				SC json.RawMessage `json:"structuredContent"`
			}
			json.Unmarshal([]byte(tc.raw), &whole)
			if sl := kept(t, s, note); sl.MIMEType != "application/json" || string(sl.Data) != string(whole.SC) {
				t.Errorf("structuredContent kept as %q, %d bytes, want the %d bytes of JSON as sent", sl.MIMEType, len(sl.Data), len(whole.SC))
			}
		})
	}

	for name, raw := range map[string]string{
		"an error":        `{"isError":true,"content":[],"structuredContent":{"content":` + q(text) + `}}`,
		"no outputSchema": fileResult,
	} {
		schema := json.RawMessage(readText)
		if name == "no outputSchema" {
			schema = nil
		}
		out, err := CutTool(s, "o", json.RawMessage(raw), limit, ViaRead, schema)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte(`"structuredContent"`)) || !bytes.Contains(out, []byte("structuredContent (")) {
			t.Errorf("%s: %.300s, want the structuredContent moved out and a note", name, out)
		}
	}
}

// TestCutToolDeep: a structuredContent nested deeper than strings are
// looked for is left whole rather than followed down, however deep.
func TestCutToolDeep(t *testing.T) {
	const depth = 200_000
	sc := `{"a":` + strings.Repeat("[", depth) + `"` + strings.Repeat("x", 20000) + `"` + strings.Repeat("]", depth) + `}`
	raw := `{"content":[],"structuredContent":` + sc + `}`
	out, err := CutTool(nil, "o", json.RawMessage(raw), 8<<10, ViaRead, json.RawMessage(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(sc)) || !bytes.Contains(out, []byte("none of its strings can safely end early")) {
		t.Errorf("%.200s…: want the structuredContent whole, and a note saying so", out)
	}
}
