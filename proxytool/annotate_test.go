package proxytool

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// annotateByMap is annotateToolResult as it was before it spliced: the
// result and each item split into maps and written out again, keys
// sorted. It is the reference the splicing one must agree with, as parsed
// JSON (sameAnnotated).
func annotateByMap(raw json.RawMessage, ann map[string]json.RawMessage) (json.RawMessage, error) {
	res, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	var content []json.RawMessage
	if c := res["content"]; len(c) > 0 && !isNull(c) {
		if err := json.Unmarshal(c, &content); err != nil {
			return nil, errors.New("its content is not an array")
		}
	}
	for i, item := range content {
		content[i] = annotateItemByMap(item, ann)
	}
	if content == nil {
		content = []json.RawMessage{}
	}
	res["content"] = marshalArray(content)
	return marshalObject(res), nil
}

// annotateItemByMap merges ann into one content item's annotations, keeping the keys
// it has (audience, priority, ...). An item that is not an object is
// returned as it is; annotations that are not an object are replaced.
func annotateItemByMap(item json.RawMessage, ann map[string]json.RawMessage) json.RawMessage {
	fields, err := objectFields(item)
	if err != nil {
		return item
	}
	merged, err := objectFields(fields["annotations"])
	if err != nil {
		merged = make(map[string]json.RawMessage, len(ann))
	}
	for k, v := range ann {
		merged[k] = v
	}
	fields["annotations"] = marshalObject(merged)
	return marshalObject(fields)
}

// sameAnnotated checks that annotateToolResult and annotateByMap agree on
// raw as a result: the same error, or results that parse the same.
func sameAnnotated(t *testing.T, raw []byte) {
	t.Helper()
	ann := callAnnotations(KindTool, "srv_tool")
	got, gerr := annotateToolResult(raw, ann)
	want, werr := annotateByMap(raw, ann)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("annotateToolResult(%q): err %v, by map %v", raw, gerr, werr)
	}
	if gerr != nil {
		return
	}
	// Numbers as their text: a server's 1e700 is valid JSON that no
	// float64 holds, and both keep its bytes.
	decode := func(b []byte) (v any, err error) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		err = d.Decode(&v)
		return v, err
	}
	g, err := decode(got)
	if err != nil {
		t.Fatalf("annotateToolResult(%q) = %q: %v", raw, got, err)
	}
	w, err := decode(want)
	if err != nil {
		t.Fatalf("annotateByMap(%q) = %q: %v", raw, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("annotateToolResult(%q) = %s, by map %s", raw, got, want)
	}
}

// TestAnnotateAsByMap: splicing the annotations into the server's bytes
// reads the same as splitting and rewriting the result did, for the shapes
// a server sends and the ones it should not; and every byte outside the
// annotations is the server's.
func TestAnnotateAsByMap(t *testing.T) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		` { "content" : [ { "type" : "text" , "text" : "a,b}" } , {} ] , "isError" : true } `,
		`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"],"proxyPath":"old"}}]}`,
		`{"content":[{"type":"text","annotations":null},{"annotations":"x"},{"annotations":[]}]}`,
		`{"content":[1,"two",null,[{}],{"\u0061nnotations":{"priority":1}}]}`,
		`{"content":null,"structuredContent":{"content":[]}}`,
		`{"_meta":{"a":1}}`, `{}`, `{"content":[]}`, `{"content":{}}`, `{"content":"x"}`,
		`{"content":[{"a":1}],"content":[{"b":2}]}`, `{"content":[{"annotations":{"a":1},"annotations":{"b":2}}]}`,
		`null`, ` null `, `[]`, `"x"`, `{`, `{"content":[}`, "{\"content\":[{\"text\":\"\xff\"}],\"\xfe\":1}",
		`{"":1e700}`, `{"content":[{"type":"text","n":-1e999}]}`, // found by FuzzDecodeArgs
	} {
		sameAnnotated(t, []byte(s))
	}
	raw := []byte(`{"isError":false, "content":[ {"type":"text","text":"<&>\u00e9"} ],"z":1.50}`)
	got, err := annotateToolResult(raw, callAnnotations(KindTool, "s_t"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"isError":false, "content":[{"annotations":{"proxyAction":"call","proxyPath":"s_t","proxyType":"tool"},"type":"text","text":"<&>\u00e9"}],"z":1.50}`
	if string(got) != want {
		t.Errorf("annotateToolResult = %s\nwant the server's bytes around the annotations: %s", got, want)
	}
	if _, err := annotateToolResult([]byte(`{"content":[]`), nil); err == nil {
		t.Error("an unfinished result was taken")
	}
}
