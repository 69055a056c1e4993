package aggregator

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpx/mcpx/config"
)

// applyOverride rewrites the capability object raw as o says: the new
// exposed name, title, description, and annotations merged over the
// source's. It returns the new object and title and description.
func applyOverride(raw json.RawMessage, name string, o config.Override, title, description string) (json.RawMessage, string, string) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw, title, description
	}
	fields["name"] = json.RawMessage(quote(name))
	if o.Title != "" {
		title = o.Title
		fields["title"] = json.RawMessage(quote(title))
	}
	if o.Description != "" {
		description = o.Description
		fields["description"] = json.RawMessage(quote(description))
	}
	if len(o.Annotations) > 0 {
		merged := map[string]any{}
		if prev, ok := fields["annotations"]; ok {
			// A source's annotations that do not decode are replaced.
			_ = json.Unmarshal(prev, &merged)
		}
		if merged == nil {
			merged = map[string]any{}
		}
		maps.Copy(merged, o.Annotations)
		fields["annotations"] = marshalRaw(merged, fields["annotations"])
	}
	return marshalRaw(fields, raw), title, description
}

// checkOverrides reports each override in filter whose key names no
// capability of the kind the server lists: a warning, not an error,
// since servers change what they offer. seen are the own names listed.
func (c *Catalog) checkOverrides(server string, kind Kind, filter config.Filter, seen []string) {
	for _, orig := range slices.Sorted(maps.Keys(filter.Override)) {
		if slices.Contains(seen, orig) {
			continue
		}
		msg := fmt.Sprintf("server %s: %ss.override.%s: the server has no %s %q", server, kind, orig, kind, orig)
		if near := config.ClosestName(orig, seen); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		c.Problems = append(c.Problems, msg)
	}
}
