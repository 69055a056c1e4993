package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/hidden"
	"github.com/mcpx/mcpx/scan"
)

// Diff is a change as a person reads it: which members changed and how.
type Diff struct {
	Kind   Kind   `json:"kind"`
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Fields are the text members (title, description) and the other
	// members that are not schemas (annotations, a prompt's arguments,
	// as compact JSON), old and new; "" where absent.
	Fields []FieldDiff `json:"fields,omitempty"`
	// Schemas say what changed in inputSchema and outputSchema.
	Schemas []SchemaDiff `json:"schemas,omitempty"`
	// Flags are warnings about the new text: hidden characters, what the
	// scanner finds aimed at the model (family, field and evidence), a
	// description far longer than its peers'.
	Flags []string `json:"flags,omitempty"`
	// Findings are the scanner's findings in the new definition, each
	// with its field, family and evidence (also in Flags, as text).
	Findings []scan.Finding `json:"findings,omitempty"`
}

// FieldDiff is one member, old and new.
type FieldDiff struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// SchemaDiff is what changed in one schema member.
type SchemaDiff struct {
	Field string `json:"field"`
	// Added, Removed and Changed name properties.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// RequiredAdded and RequiredRemoved name properties whose being
	// required changed.
	RequiredAdded   []string `json:"requiredAdded,omitempty"`
	RequiredRemoved []string `json:"requiredRemoved,omitempty"`
	// Other names the schema's other keywords that changed.
	Other []string `json:"other,omitempty"`
	// Texts are the titles and descriptions in the schema, at any depth,
	// whose text changed, old and new, by path
	// ("properties.city.description"): what the model reads of a
	// schema, which a reviewer must see to approve.
	Texts []FieldDiff `json:"texts,omitempty"`
}

// Diffs describes r's changes for a person. others holds the catalog's
// tool names: a new description that tells the model how to use another
// server's is flagged.
func (r *Review) Diffs(others *scan.Names) []Diff {
	var peers []int
	if len(r.tools) > 0 {
		for _, rec := range r.current().Tools {
			peers = append(peers, len(member(rec.Definition, "description")))
		}
	}
	out := make([]Diff, 0, len(r.Changes))
	for _, c := range r.Changes {
		d := Diff{Kind: c.Kind, Name: c.Name, Status: c.Status}
		old, cur := fields(c.Old), fields(c.New)
		for _, k := range pinnedFields[c.Kind] {
			if k == "name" || bytes.Equal(old[k], cur[k]) {
				continue
			}
			if c.Status == Removed && k != "description" && k != "title" {
				continue
			}
			if k == "inputSchema" || k == "outputSchema" {
				d.Schemas = append(d.Schemas, schemaDiff(k, old[k], cur[k]))
				continue
			}
			d.Fields = append(d.Fields, FieldDiff{Field: k, Old: text(old[k]), New: text(cur[k])})
		}
		if c.Status != Removed {
			d.Flags, d.Findings = flags(cur, r.Server, others, peers)
		}
		out = append(out, d)
	}
	return out
}

// flags are the warnings about a new or changed definition's texts.
func flags(def map[string]json.RawMessage, server string, others *scan.Names, peers []int) (out []string, findings []scan.Finding) {
	n := 0
	for _, k := range []string{"title", "description"} {
		_, h := hidden.String(text(def[k]))
		n += h
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("hides %d characters (Unicode tags, zero-width or bidi controls, private-use characters, terminal escapes); mcpx removes them before a client sees it", n))
	}
	desc, _ := hidden.String(text(def["description"]))
	if raw, err := json.Marshal(def); err == nil {
		findings = scan.Capability(raw, server, others)
		for _, f := range findings {
			out = append(out, f.String())
		}
	}
	if hidden.Outlier(len(desc), peers) {
		out = append(out, fmt.Sprintf("its description (%d bytes) is far longer than the server's others", len(desc)))
	}
	return out, findings
}

// fields splits a canonical definition into its members.
func fields(def json.RawMessage) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(def) > 0 {
		_ = json.Unmarshal(def, &m)
	}
	return m
}

func member(def json.RawMessage, key string) string { return text(fields(def)[key]) }

// text is a member for reading: a string's value, other JSON as it is.
func text(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// schemaDiff compares two JSON schemas at the level a person checks: the
// properties, which are required, and the other keywords.
func schemaDiff(field string, oldRaw, newRaw json.RawMessage) SchemaDiff {
	d := SchemaDiff{Field: field}
	old, cur := fields(oldRaw), fields(newRaw)
	oldProps, curProps := fields(old["properties"]), fields(cur["properties"])
	for _, k := range slices.Sorted(maps.Keys(curProps)) {
		prev, ok := oldProps[k]
		switch {
		case !ok:
			d.Added = append(d.Added, k)
		case !bytes.Equal(prev, curProps[k]):
			d.Changed = append(d.Changed, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(oldProps)) {
		if _, ok := curProps[k]; !ok {
			d.Removed = append(d.Removed, k)
		}
	}
	var oldReq, curReq []string
	_ = json.Unmarshal(old["required"], &oldReq)
	_ = json.Unmarshal(cur["required"], &curReq)
	for _, k := range curReq {
		if !slices.Contains(oldReq, k) {
			d.RequiredAdded = append(d.RequiredAdded, k)
		}
	}
	for _, k := range oldReq {
		if !slices.Contains(curReq, k) {
			d.RequiredRemoved = append(d.RequiredRemoved, k)
		}
	}
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k != "properties" && k != "required" && !bytes.Equal(old[k], cur[k]) {
			d.Other = append(d.Other, k)
		}
	}
	oldTexts, curTexts := schemaTexts(oldRaw), schemaTexts(newRaw)
	paths := map[string]bool{}
	for p := range oldTexts {
		paths[p] = true
	}
	for p := range curTexts {
		paths[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		if oldTexts[p] != curTexts[p] {
			d.Texts = append(d.Texts, FieldDiff{Field: p, Old: oldTexts[p], New: curTexts[p]})
		}
	}
	return d
}

// schemaTexts are the titles and descriptions of a JSON Schema at any
// depth, by their path in it.
func schemaTexts(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return out
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if s, ok := sub.(string); ok && (k == "title" || k == "description") {
					out[p] = s
					continue
				}
				walk(p, sub)
			}
		case []any:
			for i, sub := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), sub)
			}
		}
	}
	walk("", v)
	return out
}

// Summary says what changed in a schema, in one line for a person
// ("properties added: city; now required: city"), or "changed" when only
// its texts did. Names go through hidden.Visible.
func (d SchemaDiff) Summary() string {
	var parts []string
	add := func(what string, names []string) {
		if len(names) > 0 {
			parts = append(parts, what+" "+hidden.Visible(strings.Join(names, ", ")))
		}
	}
	add("properties added:", d.Added)
	add("properties removed:", d.Removed)
	add("properties changed:", d.Changed)
	add("now required:", d.RequiredAdded)
	add("no longer required:", d.RequiredRemoved)
	add("other keywords changed:", d.Other)
	if len(parts) == 0 {
		return "changed"
	}
	return strings.Join(parts, "; ")
}
