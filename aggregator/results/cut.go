package results

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/rawjson"
)

// Cut reshapes a CallToolResult whose encoding is over max bytes so that
// its text fits in max: each text item past the budget is cut at a line
// boundary, kept whole in s for owner, and a last text item says how much
// was cut and where the whole text is. Callers check the cheap length
// first. Only the text items cut are decoded, and everything else is
// copied as raw bytes, so a result of many megabytes costs about one
// more copy of its text (the one kept). A nil s keeps nothing: the note
// then only says what was cut (the terminal's mcpx call --max-bytes). A
// result with nothing to cut is returned unchanged.
func Cut(s *Store, owner string, raw json.RawMessage, max int) (json.RawMessage, error) {
	content, err := rawjson.Get(raw, "content")
	if err != nil || content == nil {
		return raw, err
	}
	budget := max
	var items [][]byte
	var notes []string
	var itemErr error
	err = rawjson.Elements(content, func(item []byte) bool {
		cut, note, used, err := cutItem(s, owner, item, budget)
		if err != nil {
			itemErr = err
			return false
		}
		budget -= used
		items = append(items, cut)
		if note != "" {
			notes = append(notes, note)
		}
		return true
	})
	if err == nil {
		err = itemErr
	}
	if err != nil {
		return nil, fmt.Errorf("tool result content: %w", err)
	}
	if len(notes) == 0 {
		return raw, nil
	}
	for _, n := range notes {
		item, err := marshal(map[string]string{"type": "text", "text": n})
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	c := append([]byte{'['}, bytes.Join(items, []byte{','})...)
	out, _, err := rawjson.Replace(raw, "content", append(c, ']'))
	return out, err
}

// cutItem cuts one content item to budget. It returns the item to send in
// its place and a note when it was cut ("" when it fits), and the bytes of
// the budget it used.
func cutItem(s *Store, owner string, item []byte, budget int) ([]byte, string, int, error) {
	typ, err := rawjson.Get(item, "type")
	if err != nil {
		return nil, "", 0, err
	}
	raw, _ := rawjson.Get(item, "text")
	if string(typ) != `"text"` || raw == nil || len(raw) <= budget {
		return item, "", min(len(raw), max(budget, 0)), nil // a JSON string is no shorter than its text
	}
	text, ok := rawjson.String(raw)
	if !ok {
		return nil, "", 0, fmt.Errorf("a text item's text is not a string")
	}
	if len(text) <= budget {
		return item, "", len(text), nil
	}
	kept, cutBytes, cutLines := CutText(text, max(budget, 0))
	note := fmt.Sprintf("[mcpx: this text was cut: %d more bytes (%d lines) of %d are not shown.]",
		cutBytes, cutLines, len(text))
	if s != nil {
		id, err := s.Put(owner, []byte(text))
		if err != nil {
			return nil, "", 0, err
		}
		uri := URIPrefix + id
		note = fmt.Sprintf("[mcpx: this text was cut: %d more bytes (%d lines) of %d are not shown. "+
			"The whole text is the resource %s; read it with resources/read, in slices with offset and length "+
			"in bytes, e.g. %s?offset=%d&length=%d]",
			cutBytes, cutLines, len(text), uri, uri, len(kept), max(budget, 4096))
	}
	k, err := marshal(kept)
	if err != nil {
		return nil, "", 0, err
	}
	out, _, err := rawjson.Replace(item, "text", k)
	if err != nil {
		return nil, "", 0, err
	}
	return out, note, len(kept), nil
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
