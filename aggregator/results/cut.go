package results

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/mcpx/mcpx/rawjson"
)

// Cut reshapes a CallToolResult whose encoding is over max bytes so that
// it fits in max, keeping in s for owner each part it takes out, under an
// ID of its own (so each note names one URI, read from offset 0):
//
//   - a structuredContent over max moves out whole (but see [CutTool]);
//     one under max stays, and the content items share what is left of
//     max;
//   - each text item past the budget is cut at a line boundary;
//   - each image, audio or embedded resource past the budget is replaced
//     by a note.
//
// Notes on cut text and on structuredContent come last, as text items; a
// note on an image, audio or embedded resource stands in its place. Each
// note says how to read the part back the way via names: with
// resources/read, or with the proxy tool, giving the exact arguments of
// the first call. A part is kept with max as its Cap, so that reading it
// back answers within the same cap as the call. Callers check the cheap
// length first. Only the parts cut are decoded, and everything else is
// copied as raw bytes: a text with nothing escaped is kept as the bytes
// of raw itself, and one with escapes is decoded once, so a result of
// many megabytes costs at most one more copy of the part kept. A nil s
// keeps nothing: the notes then only say what was cut (the terminal's
// mcpx call --max-bytes). A result with nothing to cut is returned
// unchanged.
func Cut(s *Store, owner string, raw json.RawMessage, max int, via Via) (json.RawMessage, error) {
	return CutTool(s, owner, raw, max, via, nil)
}

// CutTool is [Cut] of the result of a tool whose outputSchema is schema
// (nil: the tool has none). A client checks such a tool's
// structuredContent against its schema, and the official SDKs refuse a
// result that has none (the TypeScript one throws "has an output schema
// but did not return structured content"): so unless the result is an
// error, its structuredContent over max is not taken out but cut as the
// schema allows (see cutStructured): its long strings end early, at a
// line's end, where the schema constrains them by no more than their
// type; the rest stays as it was, over the cap if nothing can be cut.
// The whole of it is kept, and a note names it, as for one taken out.
func CutTool(s *Store, owner string, raw json.RawMessage, max int, via Via, schema json.RawMessage) (json.RawMessage, error) {
	c := cutter{s: s, owner: owner, max: max, budget: max, via: via}
	var sc, content, isError []byte
	err := rawjson.Scan(raw, func(k rawjson.Key, v []byte) bool {
		switch {
		case k.Is("structuredContent"):
			sc = v
		case k.Is("content"):
			content = v
		case k.Is("isError"):
			isError = v
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	keepSC := true // structuredContent stays, as newSC when set
	var newSC []byte
	if sc != nil && string(sc) != "null" && len(sc) > max {
		if len(schema) > 0 && string(isError) != "true" {
			target := max - min(len(content), max/2) // what the content may need, at most half
			cut, err := cutStructured(sc, schema, target)
			if err != nil {
				return nil, fmt.Errorf("tool result structuredContent: %w", err)
			}
			what := fmt.Sprintf("this result's structuredContent (%d bytes of JSON) was cut to fit: its longest strings end early", len(sc))
			if cut == nil {
				what = fmt.Sprintf("this result's structuredContent (%d bytes of JSON) stays whole, over the cap: the tool has an outputSchema, and none of its strings can safely end early", len(sc))
				cut = sc
			}
			note, err := c.note(Kept{MIMEType: "application/json", Data: sc}, what)
			if err != nil {
				return nil, err
			}
			c.notes = append(c.notes, note)
			newSC, sc = cut, cut
		} else {
			note, err := c.note(Kept{MIMEType: "application/json", Data: sc},
				fmt.Sprintf("this result's structuredContent (%d bytes of JSON) is not shown", len(sc)))
			if err != nil {
				return nil, err
			}
			c.notes = append(c.notes, note)
			keepSC, sc = false, nil
		}
	}
	if sc != nil && string(sc) != "null" {
		c.budget -= len(sc)
	}
	var items [][]byte
	var itemErr error
	if content != nil {
		err = rawjson.Elements(content, func(item []byte) bool {
			cut, err := c.item(item)
			if err != nil {
				itemErr = err
				return false
			}
			items = append(items, cut)
			return true
		})
		if err == nil {
			err = itemErr
		}
		if err != nil {
			return nil, fmt.Errorf("tool result content: %w", err)
		}
	}
	if len(c.notes) == 0 && !c.changed {
		return raw, nil
	}
	for _, n := range c.notes {
		item, err := marshal(map[string]string{"type": "text", "text": n})
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	list := append([]byte{'['}, bytes.Join(items, []byte{','})...)
	list = append(list, ']')
	return rebuild(raw, list, keepSC, newSC)
}

// rebuild returns the result raw with content as its content (added
// when raw has none) and, unless keepSC, without its structuredContent
// (with newSC in its place when set), every other member as it was: one
// copy of what stays, so that a large part that goes is never copied.
func rebuild(raw, content []byte, keepSC bool, newSC []byte) (json.RawMessage, error) {
	out := make([]byte, 0, len(content)+len(newSC)+256)
	out = append(out, '{')
	hasContent := false
	err := rawjson.Scan(raw, func(k rawjson.Key, v []byte) bool {
		switch {
		case k.Is("content"):
			v, hasContent = content, true
		case k.Is("structuredContent") && newSC != nil:
			v = newSC
		case k.Is("structuredContent") && !keepSC:
			return true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, k...), ':'), v...)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("tool result: %w", err)
	}
	if !hasContent {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(out, `"content":`...), content...)
	}
	return append(out, '}'), nil
}

// cutter is one Cut in progress.
type cutter struct {
	s       *Store
	owner   string
	max     int
	via     Via      // how the client reads a kept part back
	budget  int      // bytes of max not yet used
	notes   []string // to add as the last items
	changed bool     // an item was replaced in place
}

// item cuts one content item to the budget and returns what to send in
// its place.
func (c *cutter) item(item []byte) ([]byte, error) {
	typ, err := rawjson.Get(item, "type")
	if err != nil {
		return nil, err
	}
	switch string(typ) {
	case `"text"`:
		return c.text(item)
	case `"image"`, `"audio"`:
		return c.media(item, string(typ[1:len(typ)-1]))
	case `"resource"`:
		return c.embedded(item)
	}
	return item, nil
}

// embedded replaces an embedded resource whose text or blob is past the
// budget by a note, keeping the text or the blob's bytes.
func (c *cutter) embedded(item []byte) ([]byte, error) {
	res, _ := rawjson.Get(item, "resource")
	if res == nil {
		return item, nil
	}
	raw, binary := mustGet(res, "text"), false
	if raw == nil {
		raw, binary = mustGet(res, "blob"), true
	}
	if raw == nil || len(raw) <= c.budget {
		c.budget -= min(len(raw), max(c.budget, 0))
		return item, nil
	}
	data, ok := decode(raw)
	if !ok {
		return nil, fmt.Errorf("an embedded resource's text or blob is not a string")
	}
	mime := "text/plain"
	if binary {
		var err error
		if data, err = base64.StdEncoding.DecodeString(bytesString(data)); err != nil {
			return nil, fmt.Errorf("an embedded resource's blob is not base64: %w", err)
		}
		mime = "application/octet-stream"
	}
	if m, ok := rawjson.String(mustGet(res, "mimeType")); ok && m != "" {
		mime = m
	}
	uri, _ := rawjson.String(mustGet(res, "uri"))
	note, err := c.note(Kept{MIMEType: mime, Binary: binary, Data: data},
		fmt.Sprintf("the embedded resource %s (%s, %d bytes) is not shown: it is over this result's size cap", uri, mime, len(data)))
	if err != nil {
		return nil, err
	}
	c.changed = true
	return marshal(map[string]string{"type": "text", "text": note})
}

func (c *cutter) text(item []byte) ([]byte, error) {
	raw, _ := rawjson.Get(item, "text")
	if raw == nil || len(raw) <= c.budget {
		c.budget -= min(len(raw), max(c.budget, 0)) // a JSON string is no shorter than its text
		return item, nil
	}
	data, ok := decode(raw)
	if !ok {
		return nil, fmt.Errorf("a text item's text is not a string")
	}
	if len(data) <= c.budget {
		c.budget -= len(data)
		return item, nil
	}
	text := bytesString(data)
	kept, cutBytes, cutLines := CutText(text, max(c.budget, 0))
	c.budget -= len(kept)
	note, err := c.note(Kept{MIMEType: "text/plain", Data: data},
		fmt.Sprintf("this text was cut: %d more bytes (%d lines) of %d are not shown", cutBytes, cutLines, len(text)),
		int64(len(kept)))
	if err != nil {
		return nil, err
	}
	c.notes = append(c.notes, note)
	k, err := marshal(kept)
	if err != nil {
		return nil, err
	}
	out, _, err := rawjson.Replace(item, "text", k)
	return out, err
}

// media replaces an image or audio item whose data is past the budget by
// a note.
func (c *cutter) media(item []byte, kind string) ([]byte, error) {
	raw, _ := rawjson.Get(item, "data")
	if raw == nil || len(raw) <= c.budget {
		c.budget -= min(len(raw), max(c.budget, 0))
		return item, nil
	}
	b64, ok := decode(raw)
	if !ok {
		return nil, fmt.Errorf("an %s item's data is not a string", kind)
	}
	data, err := base64.StdEncoding.DecodeString(bytesString(b64))
	if err != nil {
		return nil, fmt.Errorf("an %s item's data is not base64: %w", kind, err)
	}
	mime := "application/octet-stream"
	if m, ok := rawjson.String(mustGet(item, "mimeType")); ok && m != "" {
		mime = m
	}
	note, err := c.note(Kept{MIMEType: mime, Binary: true, Data: data},
		fmt.Sprintf("an %s (%s, %d bytes) is not shown: it is over this result's size cap", kind, mime, len(data)))
	if err != nil {
		return nil, err
	}
	c.changed = true
	return marshal(map[string]string{"type": "text", "text": note})
}

// note keeps k and returns the note that says what was left out (what)
// and where it is kept; at, when given, is where reading on would start.
// A result the store refuses for its size is not kept, and the note says
// so.
func (c *cutter) note(k Kept, what string, at ...int64) (string, error) {
	if c.s == nil {
		return "[mcpx: " + what + ".]", nil
	}
	k.Cap = c.max
	id, err := c.s.Put(c.owner, k)
	if errors.Is(err, ErrTooLarge) {
		return fmt.Sprintf("[mcpx: %s; it was not kept: %d bytes is %v.]", what, len(k.Data), ErrTooLarge), nil
	}
	if err != nil {
		return "", err
	}
	uri := URIPrefix + id
	page := c.max // a read answers within the cap, so a slice is no longer
	kind := "The whole text is"
	switch {
	case k.Binary:
		kind, page = "It is kept as the blob resource", c.max/4*3 // base64 grows 4/3
	case k.MIMEType == "application/json":
		kind = "It is kept as the resource"
	}
	var from int64
	if len(at) > 0 {
		from = at[0]
	}
	first := fmt.Sprintf("%s?offset=%d&length=%d", uri, from, page)
	if c.via == ViaProxy {
		return fmt.Sprintf("[mcpx: %s. %s %s; read it with the proxy tool, in slices with offset and length "+
			"in bytes, each answer giving the next call, from %s]", what, kind, uri, proxyReadArgs(first)), nil
	}
	return fmt.Sprintf("[mcpx: %s. %s %s; read it with resources/read, in slices with offset and length "+
		"in bytes, e.g. %s]", what, kind, uri, first), nil
}

// proxyReadArgs are the arguments of the proxy tool's call that reads
// uri: {"action":"call","type":"resource","path":uri}.
func proxyReadArgs(uri string) string {
	return `{"action":"call","type":"resource","path":` + string(appendString(nil, uri)) + `}`
}

// stringBytes returns the bytes of s without copying them: a kept text
// is the largest thing mcpx holds (tens of megabytes), and it was just
// decoded for this alone. The store only reads what it keeps, never
// writes it, so s stays unchanged as a string must.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func mustGet(obj []byte, key string) []byte {
	v, _ := rawjson.Get(obj, key)
	return v
}

// marshal encodes v as JSON without escaping <, > and &, so that text
// reaches the client as the server wrote it.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("tool result: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
