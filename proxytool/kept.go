package proxytool

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// readKept answers call for the URI of a result the catalog k keeps,
// paging query and all: one slice of it, as it is, never objectified, so
// that slices read in turn join into the result byte for byte, in an
// answer within the cap the result was cut under. While more remains, a
// last text item says which bytes the slice holds, of how many, and gives
// the arguments of the proxy call that reads the next.
func (p *Proxy) readKept(ctx context.Context, k Keeper, req request) json.RawMessage {
	raw, err := k.ReadKept(ctx, req.path, keptReserve(req.path))
	if err != nil {
		return errorResult(err.Error())
	}
	items, meta, err := resourceItems(raw, callAnnotations(KindResource, req.path), true)
	if err != nil {
		return errorResult(fmt.Sprintf("Resource '%s': %v", req.path, err))
	}
	var m struct {
		Offset int64  `json:"mcpx/offset"`
		Length int64  `json:"mcpx/length"`
		Total  int64  `json:"mcpx/total"`
		Next   string `json:"mcpx/next"`
	}
	if meta != nil && json.Unmarshal(meta, &m) == nil && m.Next != "" {
		items = append(items, readOnNote(m.Offset, m.Length, m.Total, m.Next))
	}
	return toolResultOf(items, meta)
}

// readOnNote is the text item that says a kept result's slice is length
// bytes from offset, of total, and how to read the next, at next.
func readOnNote(offset, length, total int64, next string) json.RawMessage {
	text := fmt.Sprintf("[mcpx: this slice is %d bytes from offset %d, of %d in all. Read on with the proxy tool: %s]",
		length, offset, total, readArgs(next))
	return marshalObject(map[string]json.RawMessage{"type": quote("text"), "text": quote(text)})
}

// readArgs are the proxy tool's arguments that read the resource uri.
func readArgs(uri string) string {
	return `{"action":"call","type":"resource","path":` + string(quote(uri)) + `}`
}

// keptReserve is how many bytes readKept's answer for path adds to the
// ReadResourceResult it is given: the annotations, and the note on
// reading on, its numbers at their longest (Keeper.ReadKept). The slice
// and the _meta appear once in each, so the difference is the same for
// any of them.
func keptReserve(path string) int {
	raw := json.RawMessage(`{"contents":[{}],"_meta":{}}`)
	items, meta, _ := resourceItems(raw, callAnnotations(KindResource, path), true) // a constant: no error
	base, _, _ := strings.Cut(path, "?")
	most := strconv.FormatInt(math.MaxInt64, 10)
	items = append(items, readOnNote(math.MaxInt64, math.MaxInt64, math.MaxInt64, base+"?offset="+most+"&length="+most))
	return len(toolResultOf(items, meta)) - len(raw)
}
