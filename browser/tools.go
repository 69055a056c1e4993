package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

//go:embed js/snapshot.js
var snapshotJS string

//go:embed js/resolve.js
var resolveJS string

// ToolsOptions configure the browser tools. Nil means the defaults.
type ToolsOptions struct {
	// CDP adds the raw escape hatch `cdp` (off by default: it can do
	// anything the debugger can).
	CDP bool
	// MaxSnapshotChars bounds the text of a snapshot, of the console
	// messages and of an evaluate result, in characters (default 50,000).
	// A longer one is cut with a note saying how to get the rest.
	MaxSnapshotChars int
	// MaxImageBytes bounds a screenshot's decoded size (default 1 MiB):
	// a larger one is scaled down and sent as JPEG.
	MaxImageBytes int
}

// Defaults of [ToolsOptions].
const (
	DefaultMaxSnapshotChars = 50000
	DefaultMaxImageBytes    = 1 << 20
)

// Tools are the browser_* tools, by their names without prefix
// ("navigate", "snapshot", ...). The aggregator adds the prefix.
type Tools struct {
	c    *Client
	opts ToolsOptions
	defs map[string]toolDef
}

type toolDef struct {
	json json.RawMessage // the MCP Tool object
	run  func(ctx context.Context, t *Tools, args json.RawMessage) (*result, error)
}

// NewTools returns the tools over c.
func NewTools(c *Client, opts *ToolsOptions) *Tools {
	t := &Tools{c: c, defs: map[string]toolDef{}}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.MaxSnapshotChars <= 0 {
		t.opts.MaxSnapshotChars = DefaultMaxSnapshotChars
	}
	if t.opts.MaxImageBytes <= 0 {
		t.opts.MaxImageBytes = DefaultMaxImageBytes
	}
	for _, d := range toolTable {
		if d.name == "cdp" && !t.opts.CDP {
			continue
		}
		b, err := json.Marshal(map[string]any{
			"name": d.name, "title": d.title, "description": d.desc,
			"inputSchema": d.schema(), "annotations": d.annotations(),
		})
		if err != nil {
			panic(fmt.Sprintf("browser tool %s: %v", d.name, err)) // a bug in the table, caught by tests
		}
		t.defs[d.name] = toolDef{json: b, run: d.run}
	}
	return t
}

// List returns the MCP Tool objects, sorted by name.
func (t *Tools) List() []json.RawMessage {
	names := make([]string, 0, len(t.defs))
	for n := range t.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i] = t.defs[n].json
	}
	return out
}

// Call runs one tool and returns a CallToolResult. It never fails: every
// problem is a result with isError and a message a model can act on.
func (t *Tools) Call(ctx context.Context, name string, args json.RawMessage) json.RawMessage {
	d, ok := t.defs[name]
	if !ok {
		return errorResult(fmt.Sprintf("unknown browser tool %q", name))
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	res, err := d.run(ctx, t, args)
	if err != nil {
		return errorResult(clipRunes(err.Error(), t.opts.MaxSnapshotChars))
	}
	res.capText(t.opts.MaxSnapshotChars)
	return res.encode()
}

// capText is the last guard of "every result fits the client": the tools
// with long results cut them with a note of their own (snapshot, console,
// evaluate); anything else longer than limit (a raw CDP answer, a list of
// a thousand tabs) is cut here, saying so.
func (r *result) capText(limit int) {
	for _, c := range r.content {
		text, ok := c["text"].(string)
		if !ok {
			continue
		}
		if n := utf8.RuneCountInString(text); n > limit {
			note := fmt.Sprintf("\n(cut: the result has %d characters, over the limit of %d)", n, limit)
			c["text"] = clipRunes(text, limit-utf8.RuneCountInString(note)) + note
		}
	}
}

// result is a CallToolResult under construction.
type result struct {
	content []map[string]any
}

func textResult(format string, a ...any) *result {
	return &result{content: []map[string]any{{"type": "text", "text": fmt.Sprintf(format, a...)}}}
}

func (r *result) encode() json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": r.content})
	return b
}

func errorResult(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]any{{"type": "text", "text": msg}},
		"isError": true,
	})
	return b
}

// decodeArgs reads a tool's arguments strictly: an unknown key or a wrong
// type is an error naming it.
func decodeArgs(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// target is how a tool names an element: a ref from the last snapshot, or
// a CSS selector.
type target struct {
	Ref      string `json:"ref"`
	Selector string `json:"selector"`
	Element  string `json:"element"` // a human description, for logs only
}

func (tg target) check() error {
	if (tg.Ref == "") == (tg.Selector == "") {
		return fmt.Errorf("give exactly one of ref (from browser_snapshot) or selector")
	}
	return nil
}
