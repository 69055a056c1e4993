package codemode

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// This file turns the proxy's answers into the values a script sees.
// The proxy's wire format is in docs/proxy-tool.md: list and info answer
// one embedded JSON resource, a tool call the tool's own CallToolResult
// with its items annotated, a resource read one embedded resource per
// content, a prompt one embedded JSON resource.

// toolResult is the part of a CallToolResult a script's value comes from.
type toolResult struct {
	Content           []contentItem   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

type contentItem struct {
	Type     string           `json:"type"`
	Text     string           `json:"text"`
	Resource *embeddedContent `json:"resource"`
	raw      json.RawMessage
}

type embeddedContent struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

func (c *contentItem) UnmarshalJSON(b []byte) error {
	type plain contentItem
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = contentItem(p)
	c.raw = append(json.RawMessage(nil), b...)
	return nil
}

// errThrown is what a result with isError becomes: the script's call
// throws its text.
type errThrown struct{ text string }

func (e *errThrown) Error() string { return e.text }

// decodeResult reads a proxy answer as a CallToolResult; an isError one
// is an *errThrown with its text.
func decodeResult(raw json.RawMessage) (toolResult, error) {
	var r toolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, errors.New("the proxy's answer is not a CallToolResult: " + err.Error())
	}
	if r.IsError {
		return r, &errThrown{text: texts(r.Content)}
	}
	return r, nil
}

// texts joins the text of the items that have some.
func texts(items []contentItem) string {
	var parts []string
	for _, it := range items {
		switch {
		case it.Type == "text":
			parts = append(parts, it.Text)
		case it.Resource != nil && it.Resource.Text != nil:
			parts = append(parts, *it.Resource.Text)
		}
	}
	if len(parts) == 0 {
		return "the call failed and said nothing"
	}
	return strings.Join(parts, "\n")
}

// embeddedJSON is the value of a list, info or prompt answer: the JSON
// text of its first embedded resource (list follows it with a summary
// for a model, which a script has no use for).
func embeddedJSON(raw json.RawMessage) (json.RawMessage, error) {
	r, err := decodeResult(raw)
	if err != nil {
		return nil, err
	}
	for _, it := range r.Content {
		if it.Resource == nil || it.Resource.Text == nil {
			continue
		}
		if text := []byte(*it.Resource.Text); json.Valid(text) {
			return text, nil
		}
		return nil, errors.New("the proxy's answer holds text that is not JSON")
	}
	return nil, errors.New("the proxy's answer holds no JSON")
}

// toolValue is the value of a tool call: its structuredContent when it
// has one; else its text, parsed when the text is a JSON object or array
// (as many servers answer); else, with anything but text in it, the
// content items themselves.
func toolValue(raw json.RawMessage) (json.RawMessage, error) {
	r, err := decodeResult(raw)
	if err != nil {
		return nil, err
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		return r.StructuredContent, nil
	}
	allText := true
	for _, it := range r.Content {
		allText = allText && it.Type == "text"
	}
	if !allText {
		return itemsValue(r.Content), nil
	}
	var parts []string
	for _, it := range r.Content {
		parts = append(parts, it.Text)
	}
	return textValue(strings.Join(parts, "\n")), nil
}

// resourceValue is the value of a resource read: each content's text
// (parsed when it is JSON), or {uri, mimeType, blob} for a blob; one
// content is its value alone, several an array.
func resourceValue(raw json.RawMessage) (json.RawMessage, error) {
	r, err := decodeResult(raw)
	if err != nil {
		return nil, err
	}
	var vals []json.RawMessage
	for _, it := range r.Content {
		e := it.Resource
		switch {
		case e == nil:
			vals = append(vals, it.raw)
		case e.Text != nil && e.MimeType == "application/json" && json.Valid([]byte(*e.Text)):
			vals = append(vals, json.RawMessage(*e.Text))
		case e.Text != nil:
			vals = append(vals, textValue(*e.Text))
		default:
			b, _ := json.Marshal(map[string]any{"uri": e.URI, "mimeType": e.MimeType, "blob": e.Blob})
			vals = append(vals, b)
		}
	}
	if len(vals) == 1 {
		return vals[0], nil
	}
	b, _ := json.Marshal(vals)
	return b, nil
}

// textValue is a text as a script sees it: a JSON object or array parsed,
// anything else the string.
func textValue(s string) json.RawMessage {
	t := bytes.TrimSpace([]byte(s))
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		return t
	}
	b, _ := json.Marshal(s)
	return b
}

// itemsValue is content items as they came.
func itemsValue(items []contentItem) json.RawMessage {
	raws := make([]json.RawMessage, len(items))
	for i, it := range items {
		raws[i] = it.raw
	}
	b, _ := json.Marshal(raws)
	return b
}
