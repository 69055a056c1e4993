package dashboard

import (
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
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []field
	for name, raw := range s.Properties {
		var p struct {
			Type        any    `json:"type"`
			Enum        []any  `json:"enum"`
			Description string `json:"description"`
		}
		json.Unmarshal(raw, &p)
		f := field{Name: name, Kind: "json", Required: slices.Contains(s.Required, name), Description: p.Description}
		typ, _ := p.Type.(string)
		switch {
		case len(p.Enum) > 0 && typ == "string":
			f.Kind = "enum"
			for _, v := range p.Enum {
				if s, ok := v.(string); ok {
					f.Enum = append(f.Enum, s)
				}
			}
		case typ == "string" || typ == "number" || typ == "integer" || typ == "boolean":
			f.Kind = typ
		}
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
