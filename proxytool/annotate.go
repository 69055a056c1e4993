package proxytool

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/mcpx/mcpx/rawjson"
)

// callAnnotations are the keys the proxy adds to each content item of a
// call result.
func callAnnotations(kind Kind, path string) map[string]json.RawMessage {
	return map[string]json.RawMessage{
		"proxyType":   quote(string(kind)),
		"proxyAction": quote("call"),
		"proxyPath":   quote(path),
	}
}

// annotateToolResult merges ann into the annotations of every content item
// of a CallToolResult, spliced into the bytes the server wrote: everything
// else, in the items and in the result (isError, structuredContent, _meta,
// fields unknown to us), is kept as it was, in its order. Splitting the
// result and each item into maps and writing them out again was a fifth of
// a proxied call's CPU (BenchmarkCallSequential's proxy).
func annotateToolResult(raw json.RawMessage, ann map[string]json.RawMessage) (json.RawMessage, error) {
	if !rawjson.Valid(raw) {
		return nil, errors.New("it is not a JSON object")
	}
	content, err := rawjson.Get(raw, "content")
	if err != nil {
		if isNull(bytes.TrimSpace(raw)) {
			return nil, errors.New("it is null, not an object")
		}
		return nil, errors.New("it is not a JSON object")
	}
	annotations := marshalObject(ann)
	items := make([]byte, 0, len(content)+(len(annotations)+16)*4)
	items = append(items, '[')
	if len(content) > 0 && !isNull(content) {
		first := true
		err := rawjson.Elements(content, func(item []byte) bool {
			if !first {
				items = append(items, ',')
			}
			first = false
			items = appendAnnotated(items, item, ann, annotations)
			return true
		})
		if err != nil {
			return nil, errors.New("its content is not an array")
		}
	}
	return rawjson.Set(raw, "content", append(items, ']'))
}

// appendAnnotated appends a content item with ann merged into its
// annotations (already written out: annotations), keeping the keys it has
// (audience, priority, ...). An item that is not an object is appended as
// it is; annotations that are not an object are replaced.
func appendAnnotated(dst, item []byte, ann map[string]json.RawMessage, annotations []byte) []byte {
	have, err := rawjson.Get(item, "annotations")
	if err != nil {
		return append(dst, item...)
	}
	if have == nil {
		// The usual item: its annotations go first, nothing is copied twice.
		open := bytes.IndexByte(item, '{') + 1
		dst = append(dst, item[:open]...)
		dst = append(dst, `"annotations":`...)
		dst = append(dst, annotations...)
		if rest := bytes.TrimLeft(item[open:], " \t\r\n"); rest[0] != '}' {
			dst = append(dst, ',')
		}
		return append(dst, item[open:]...)
	}
	merged := annotations
	if have[0] == '{' {
		// ann's members, then those of its own that ann does not set.
		merged = append([]byte(nil), annotations[:len(annotations)-1]...)
		rawjson.Scan(have, func(key rawjson.Key, value []byte) bool {
			for k := range ann {
				if key.Is(k) {
					return true
				}
			}
			if len(merged) > 1 {
				merged = append(merged, ',')
			}
			merged = append(append(append(merged, key...), ':'), value...)
			return true
		})
		merged = append(merged, '}')
	}
	out, _, err := rawjson.Replace(item, "annotations", merged)
	if err != nil {
		return append(dst, item...)
	}
	return append(dst, out...)
}

// resourceAsToolResult turns a ReadResourceResult into a CallToolResult:
// each content becomes an embedded resource annotated with ann, its JSON
// text objectified unless asIs. The read result's _meta becomes the tool
// result's.
func resourceAsToolResult(raw json.RawMessage, ann map[string]json.RawMessage, asIs bool) (json.RawMessage, error) {
	items, meta, err := resourceItems(raw, ann, asIs)
	if err != nil {
		return nil, err
	}
	return toolResultOf(items, meta), nil
}

// resourceItems are the content items resourceAsToolResult makes of a
// ReadResourceResult, and the result's _meta (nil: none).
func resourceItems(raw json.RawMessage, ann map[string]json.RawMessage, asIs bool) (items []json.RawMessage, meta json.RawMessage, err error) {
	res, err := objectFields(raw)
	if err != nil {
		return nil, nil, err
	}
	var contents []json.RawMessage
	if c := res["contents"]; len(c) > 0 && !isNull(c) {
		if err := json.Unmarshal(c, &contents); err != nil {
			return nil, nil, errors.New("its contents are not an array")
		}
	}
	annotations := marshalObject(ann)
	items = make([]json.RawMessage, len(contents))
	for i, c := range contents {
		if !asIs {
			c = objectify(c)
		}
		items[i] = marshalObject(map[string]json.RawMessage{
			"type":        quote("resource"),
			"resource":    c,
			"annotations": annotations,
		})
	}
	if m := res["_meta"]; len(m) > 0 && !isNull(m) {
		meta = m
	}
	return items, meta, nil
}

// toolResultOf is the CallToolResult of content items and a _meta (nil:
// none).
func toolResultOf(items []json.RawMessage, meta json.RawMessage) json.RawMessage {
	out := map[string]json.RawMessage{"content": marshalArray(items)}
	if meta != nil {
		out["_meta"] = meta
	}
	return marshalObject(out)
}

// objectify rewrites a text resource content whose text is JSON but whose
// mimeType is not application/json: the text is compacted, the mimeType
// becomes application/json and the original one moves to contentType
// (left out when there was none). Blobs, text already typed JSON, text that
// is not JSON, and anything malformed are returned unchanged, other fields
// (_meta, ...) always kept.
func objectify(c json.RawMessage) json.RawMessage {
	fields, err := objectFields(c)
	if err != nil {
		return c
	}
	text, ok := stringValue(fields["text"])
	if !ok {
		return c
	}
	mime, hasMime := fields["mimeType"]
	if isNull(mime) {
		hasMime = false
	}
	if hasMime {
		m, ok := stringValue(mime)
		if !ok || m == "application/json" {
			return c
		}
	}
	compact, err := compactJSON([]byte(text))
	if err != nil {
		return c
	}
	fields["text"] = appendQuoted(nil, compact)
	fields["mimeType"] = quote("application/json")
	if hasMime {
		fields["contentType"] = mime
	}
	return marshalObject(fields)
}

// objectFields decodes a JSON object into its fields.
func objectFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if !rawjson.Valid(raw) {
		return nil, errors.New("it is not a JSON object")
	}
	fields, err := members(raw)
	if err != nil {
		if isNull(bytes.TrimSpace(raw)) {
			return nil, errors.New("it is null, not an object")
		}
		return nil, errors.New("it is not a JSON object")
	}
	return fields, nil
}

// members splits a valid JSON object into its members, as json.Unmarshal
// into a map would (the last of a repeated key wins, escaped keys
// decoded), the values left where they are in raw: a proxied call's
// result and arguments are split this way several times, and decoding
// them through reflection was most of what the proxy tool added to a
// call. Text that is not valid UTF-8 goes through encoding/json, which
// makes each invalid byte U+FFFD in the keys too.
func members(raw []byte) (map[string]json.RawMessage, error) {
	if !utf8.Valid(raw) {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return nil, rawjson.ErrNotObject
		}
		return fields, nil
	}
	fields := make(map[string]json.RawMessage, 4)
	err := rawjson.Members(raw, func(key string, value []byte) bool {
		fields[key] = value
		return true
	})
	if err != nil {
		return nil, err
	}
	return fields, nil
}
