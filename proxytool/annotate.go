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
// of a CallToolResult. Everything else, in the items and in the result
// (isError, structuredContent, _meta, fields unknown to us), is kept.
func annotateToolResult(raw json.RawMessage, ann map[string]json.RawMessage) (json.RawMessage, error) {
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
		content[i] = annotate(item, ann)
	}
	if content == nil {
		content = []json.RawMessage{}
	}
	res["content"] = marshalArray(content)
	return marshalObject(res), nil
}

// annotate merges ann into one content item's annotations, keeping the keys
// it has (audience, priority, ...). An item that is not an object is
// returned as it is; annotations that are not an object are replaced.
func annotate(item json.RawMessage, ann map[string]json.RawMessage) json.RawMessage {
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

// resourceAsToolResult turns a ReadResourceResult into a CallToolResult:
// each content becomes an embedded resource annotated with ann, its JSON
// text objectified. The read result's _meta becomes the tool result's.
func resourceAsToolResult(raw json.RawMessage, ann map[string]json.RawMessage) (json.RawMessage, error) {
	res, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	var contents []json.RawMessage
	if c := res["contents"]; len(c) > 0 && !isNull(c) {
		if err := json.Unmarshal(c, &contents); err != nil {
			return nil, errors.New("its contents are not an array")
		}
	}
	annotations := marshalObject(ann)
	items := make([]json.RawMessage, len(contents))
	for i, c := range contents {
		items[i] = marshalObject(map[string]json.RawMessage{
			"type":        quote("resource"),
			"resource":    objectify(c),
			"annotations": annotations,
		})
	}
	out := map[string]json.RawMessage{"content": marshalArray(items)}
	if m := res["_meta"]; len(m) > 0 && !isNull(m) {
		out["_meta"] = m
	}
	return marshalObject(out), nil
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
	if !json.Valid(raw) {
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
