package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// snapshotReserve is what the header and the note about a cut may take
// of browser.maxSnapshotChars; the outline gets the rest.
const snapshotReserve = 3000

func runSnapshot(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		Ref      string `json:"ref"`
		Selector string `json:"selector"`
		Offset   int    `json:"offset"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Ref != "" && a.Selector != "" {
		return nil, fmt.Errorf("give ref or selector, not both")
	}
	if a.Offset < 0 {
		return nil, fmt.Errorf("offset must be 0 or more, got %d", a.Offset)
	}
	limit := t.opts.MaxSnapshotChars
	opts, _ := json.Marshal(map[string]any{
		"maxChars": max(limit-snapshotReserve, limit/2), "offset": a.Offset, "ref": a.Ref, "selector": a.Selector,
	})
	var s struct {
		URL, Title, Text, Error string
		Offset, End, Total      int
		TotalChars              int
		Modal                   bool
		Overlay                 string
		After                   []struct {
			Line           int
			What, Selector string
		}
	}
	if err := t.c.evalInto(ctx, fmt.Sprintf("(%s)(%s)", snapshotJS, opts), &s); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if s.Error != "" {
		return nil, fmt.Errorf("snapshot: %s", s.Error)
	}
	if a.Offset > 0 && a.Offset >= s.Total {
		return nil, fmt.Errorf("offset %d is past the end: the outline has %d lines now", a.Offset, s.Total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Page state\n- Page URL: %s\n- Page Title: %s\n", clipRunes(s.URL, 300), clipRunes(s.Title, 200))
	if s.Modal {
		b.WriteString("- A modal dialog is open: only its contents can be acted on, so only they are shown.\n")
	}
	if s.Overlay != "" {
		fmt.Fprintf(&b, "- An overlay covers the page (%s): deal with it first; what lies under it cannot be clicked until then.\n", clipRunes(s.Overlay, 120))
	}
	scope := ""
	switch {
	case a.Ref != "":
		scope = fmt.Sprintf(" of ref %s", a.Ref)
	case a.Selector != "":
		scope = fmt.Sprintf(" of %q", a.Selector)
	}
	fmt.Fprintf(&b, "### Snapshot%s\n```yaml\n%s\n```", scope, s.Text)
	if s.Offset > 0 || s.End < s.Total {
		fmt.Fprintf(&b, "\nShowing lines %d-%d of %d (%d characters in all; the limit is %d).", s.Offset+1, s.End, s.Total, s.TotalChars, limit)
		if s.End < s.Total {
			fmt.Fprintf(&b, " The outline was cut after line %d. For the rest call browser_snapshot with offset=%d", s.End, s.End)
			if scope != "" {
				fmt.Fprintf(&b, " (and the same %s)", strings.TrimPrefix(scope, " of "))
			}
			b.WriteString(", or outline only a part of the page with selector (a CSS selector) or ref (an element's ref).")
			if len(s.After) > 0 {
				b.WriteString(" Parts after the cut:")
				for _, p := range s.After {
					fmt.Fprintf(&b, "\n- line %d: %s: selector %q", p.Line+1, p.What, p.Selector)
				}
			}
		}
	}
	out := b.String()
	if utf8.RuneCountInString(out) > limit {
		// A header longer than the reserve (a huge title or URL): the
		// limit holds regardless.
		out = clipRunes(out, limit)
	}
	return textResult("%s", out), nil
}
