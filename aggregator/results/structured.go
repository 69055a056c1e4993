package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpx/mcpx/rawjson"
)

// A structuredContent is cut, for a tool with an outputSchema, only where
// the cut value is sure to be valid wherever the whole one was: a long
// string ends early, at a line's end, when its place in the value has a
// schema found by following properties, additionalProperties, items and
// prefixItems from the root, one that constrains it by no more than a
// type that allows strings (and a maxLength, which a shorter string
// keeps). Anything that makes the place's schema a matter of evaluation
// ($ref, anyOf, oneOf, allOf, not, if/then/else, patternProperties,
// dependent or unevaluated keywords) or that a shorter string could break
// (pattern, format, enum, const, minLength; uniqueItems or contains
// around it) leaves the string whole. Without a JSON Schema library: one
// costs mcpx's every start the compilation of its meta-schemas, for a
// check this needs once in a while.

// minCutString is the shortest string worth ending early.
const minCutString = 256

// maxCutDepth is how deep in a structuredContent strings are looked for:
// each level is a scan of what is under it, and an upstream's nesting
// has no other bound.
const maxCutDepth = 32

// blocking are the keywords under which a place's schema is not followed:
// the value there is left whole.
var blocking = []string{
	"$ref", "$dynamicRef", "$recursiveRef", "anyOf", "oneOf", "allOf", "not", "if", "then", "else",
	"patternProperties", "dependentSchemas", "dependencies", "unevaluatedProperties", "unevaluatedItems",
	"enum", "const", "uniqueItems", "contains", "minContains", "maxContains", "contentSchema",
}

// blockingString are the keywords that keep a string whole.
var blockingString = []string{"pattern", "format", "minLength"}

// cutStructured returns sc, a structuredContent, with its long strings
// ended early where schema allows it (see above), so that it is at most
// target bytes if it can be; nil when nothing in it can be cut.
func cutStructured(sc, schema []byte, target int) ([]byte, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	var spots []spot
	if err := findStrings(sc, sc, root, 0, &spots); err != nil {
		return nil, err
	}
	if len(spots) == 0 {
		return nil, nil
	}
	// The strings share what the rest leaves of target, the shorter ones
	// whole where they fit.
	room := target - len(sc)
	for _, sp := range spots {
		room += sp.end - sp.start - 2
	}
	order := make([]int, len(spots))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return spots[a].len() - spots[b].len() })
	for n, i := range order {
		share := max(room, 0) / (len(order) - n)
		spots[i].room = min(spots[i].len()-2, share)
		room -= spots[i].room
	}
	out := make([]byte, 0, max(target, 0)+len(spots)*8)
	at := 0
	for _, sp := range spots {
		out = append(out, sc[at:sp.start]...)
		if sp.room >= sp.len()-2 {
			out = append(out, sc[sp.start:sp.end]...)
		} else {
			var err error
			if out, err = endEarly(out, sc[sp.start:sp.end], sp.room+2); err != nil {
				return nil, err
			}
		}
		at = sp.end
	}
	return append(out, sc[at:]...), nil
}

// spot is a string in a structuredContent that may end early: its bounds
// and the bytes of JSON (quotes not counted) it may keep.
type spot struct{ start, end, room int }

func (s spot) len() int { return s.end - s.start }

// findStrings adds to spots, in order, each long string of v (a value
// inside sc, depth levels down) whose place has a schema that lets it
// end early.
func findStrings(sc, v []byte, schema any, depth int, spots *[]spot) error {
	if !followable(schema) || len(v) == 0 || depth > maxCutDepth {
		return nil
	}
	switch v[0] {
	case '"':
		if len(v) >= minCutString && cuttable(schema) {
			start := cap(sc) - cap(v)
			*spots = append(*spots, spot{start: start, end: start + len(v)})
		}
	case '{':
		return rawjson.Members(v, func(key string, m []byte) bool {
			return findStrings(sc, m, property(schema, key), depth+1, spots) == nil
		})
	case '[':
		i := 0
		return rawjson.Elements(v, func(e []byte) bool {
			err := findStrings(sc, e, item(schema, i), depth+1, spots)
			i++
			return err == nil
		})
	}
	return nil
}

// followable reports whether the place of a schema is known without
// evaluating it: true, or an object with no blocking keyword.
func followable(schema any) bool {
	switch s := schema.(type) {
	case bool:
		return s
	case map[string]any:
		for _, k := range blocking {
			if _, ok := s[k]; ok {
				return false
			}
		}
		return true
	}
	return false
}

// cuttable reports whether a string under schema may be shorter.
func cuttable(schema any) bool {
	s, ok := schema.(map[string]any)
	if !ok {
		return schema == true
	}
	for _, k := range blockingString {
		if _, ok := s[k]; ok {
			return false
		}
	}
	switch t := s["type"].(type) {
	case nil:
		return true
	case string:
		return t == "string"
	case []any:
		return slices.Contains(t, any("string"))
	}
	return false
}

// property is the schema of an object's member key.
func property(schema any, key string) any {
	s, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if p, ok := props[key]; ok {
			return p
		}
	}
	if a, ok := s["additionalProperties"]; ok {
		return a
	}
	return true
}

// item is the schema of an array's element i.
func item(schema any, i int) any {
	s, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	if prefix, ok := s["prefixItems"].([]any); ok {
		if i < len(prefix) {
			return prefix[i]
		}
		if items, ok := s["items"]; ok {
			return items
		}
		return true
	}
	switch items := s["items"].(type) {
	case []any: // draft 7 and before: a tuple
		if i < len(items) {
			return items[i]
		}
		if a, ok := s["additionalItems"]; ok {
			return a
		}
		return true
	case nil:
		return true
	default:
		return items
	}
}

// endEarly appends raw, a JSON string, ended early at a line's end so
// that it takes at most room bytes of JSON, quotes included; a first line
// longer than that is cut within it, in whole characters.
func endEarly(dst, raw []byte, room int) ([]byte, error) {
	text, ok := decodePrefix(raw, max(room-2, 0))
	if !ok {
		return nil, fmt.Errorf("a string is not valid JSON")
	}
	_, n := appendText(nil, text, room, false) // as much as fits once escaped
	kept := text[:n]
	if i := bytes.LastIndexByte(kept, '\n'); i >= 0 {
		kept = kept[:i+1]
	}
	dst, _ = appendText(dst, kept, -1, true)
	return dst, nil
}
