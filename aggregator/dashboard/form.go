package dashboard

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// field is one input of a tool's form, made from a property of its
// inputSchema.
type field struct {
	Name        string
	Kind        string // string, number, integer, boolean, enum, or json (objects, arrays, anything else)
	Enum        []string
	Required    bool
	Description string
	Value       string // as the form sent it
}

// Input is the name of the field's input in the form.
func (f field) Input() string { return "arg." + f.Name }

// formFields are the fields of a form for inputSchema: the required
// properties first, then by name.
func formFields(schema json.RawMessage) []field {
	var s struct {
		Properties  map[string]json.RawMessage `json:"properties"`
		Required    []string                   `json:"required"`
		Defs        map[string]json.RawMessage `json:"$defs"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	defs := func(ref string) json.RawMessage {
		if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
			return s.Defs[name]
		}
		if name, ok := strings.CutPrefix(ref, "#/definitions/"); ok {
			return s.Definitions[name]
		}
		return nil
	}
	var out []field
	for name, raw := range s.Properties {
		f := field{Name: name, Kind: "json", Required: slices.Contains(s.Required, name)}
		f.Kind, f.Enum, f.Description = kindOf(raw, defs, 0)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b field) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// property is what a form reads of a property's schema.
type property struct {
	Type        any               `json:"type"`
	Enum        []any             `json:"enum"`
	Description string            `json:"description"`
	Ref         string            `json:"$ref"`
	AnyOf       []json.RawMessage `json:"anyOf"`
	OneOf       []json.RawMessage `json:"oneOf"`
}

// kindOf is the input a property's schema asks for: a simple type,
// through a local $ref and past a "null" alternative (a type list, or
// anyOf/oneOf); json for anything else.
func kindOf(raw json.RawMessage, defs func(string) json.RawMessage, depth int) (kind string, enum []string, desc string) {
	var p property
	if json.Unmarshal(raw, &p) != nil || depth > 4 {
		return "json", nil, ""
	}
	if p.Ref != "" {
		k, e, d := kindOf(defs(p.Ref), defs, depth+1)
		return k, e, cmp.Or(p.Description, d)
	}
	var types []string
	switch t := p.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		for _, alt := range slices.Concat(p.AnyOf, p.OneOf) {
			var a property
			json.Unmarshal(alt, &a)
			if a.Type == "null" {
				continue
			}
			k, e, d := kindOf(alt, defs, depth+1)
			types, enum, desc = append(types, k), e, d
		}
		if len(types) == 1 {
			return types[0], enum, cmp.Or(p.Description, desc)
		}
		return "json", nil, p.Description
	}
	if len(types) != 1 {
		return "json", nil, p.Description
	}
	switch typ := types[0]; {
	case typ == "string" && len(p.Enum) > 0:
		for _, v := range p.Enum {
			if s, ok := v.(string); ok {
				enum = append(enum, s)
			}
		}
		return "enum", enum, p.Description
	case typ == "string" || typ == "number" || typ == "integer" || typ == "boolean":
		return typ, nil, p.Description
	}
	return "json", nil, p.Description
}

// arguments are the call's arguments: raw when given (a JSON object
// typed into the form), else the fields' values, each as its kind. An
// optional field left empty is not sent.
func arguments(fields []field, raw string) (json.RawMessage, error) {
	if raw = strings.TrimSpace(raw); raw != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("the raw arguments are not a JSON object: %w", err)
		}
		return json.RawMessage(raw), nil
	}
	args := map[string]json.RawMessage{}
	for _, f := range fields {
		v := f.Value
		if v == "" && f.Kind != "string" || v == "" && !f.Required {
			if f.Required {
				return nil, fmt.Errorf("%s is required", f.Name)
			}
			continue
		}
		var enc json.RawMessage
		switch f.Kind {
		case "string", "enum":
			enc, _ = json.Marshal(v)
		case "number":
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", f.Name, v)
			}
			enc, _ = json.Marshal(n)
		case "integer":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not an integer", f.Name, v)
			}
			enc, _ = json.Marshal(n)
		case "boolean":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not true or false", f.Name, v)
			}
			enc, _ = json.Marshal(b)
		default:
			if !json.Valid([]byte(v)) {
				return nil, errors.New(f.Name + ": not valid JSON")
			}
			enc = json.RawMessage(v)
		}
		args[f.Name] = enc
	}
	return json.Marshal(args)
}
