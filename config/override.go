package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Override rewrites how one tool or prompt of a server is shown to
// clients (tools.override, prompts.override, keyed by the server's own
// name). Empty fields leave the server's text as it is; a call still
// reaches the server under its own name.
type Override struct {
	// Name replaces the server's name for it; the prefix is still put
	// before it.
	Name        string
	Title       string
	Description string
	// Annotations are merged over the tool's own (e.g. readOnlyHint);
	// nil keeps them as they are. Tools only.
	Annotations map[string]any
}

// overrideKeys are the keys of one override.
var overrideKeys = []string{"name", "title", "description", "annotations"}

// overrides reads the override object of a tools or prompts section:
// each key a capability's own name, each value an Override. Two
// overrides onto the same new name are an error: only one could keep it.
func (r *reader) overrides(key string, annotations bool) map[string]Override {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(key, "want an object keyed by the server's own names, not %s", kind(v))
		return nil
	}
	out := make(map[string]Override, len(m))
	renamed := map[string]string{} // new name -> the original given it
	for _, orig := range slices.Sorted(maps.Keys(m)) {
		field := key + "." + orig
		if orig == "" {
			r.fail(key, "empty name")
			return nil
		}
		om, ok := m[orig].(map[string]any)
		if !ok {
			r.fail(field, "want an object with name, title, description or annotations, not %s", kind(m[orig]))
			return nil
		}
		sub := &reader{p: r.p, server: r.server, prefix: r.prefix + field + ".", m: om}
		var o Override
		o.Name, _ = sub.label("name")
		o.Title, _ = sub.str("title")
		o.Description, _ = sub.str("description")
		known := overrideKeys
		if annotations {
			o.Annotations = sub.object("annotations")
		} else {
			known = overrideKeys[:3]
		}
		sub.warnUnknown(known...)
		if sub.err != nil {
			r.err = sub.err
			return nil
		}
		if o.Name != "" {
			if prev, taken := renamed[o.Name]; taken {
				r.fail(field+".name", "%q is already the new name of %q: two capabilities cannot share a name", o.Name, prev)
				return nil
			}
			renamed[o.Name] = orig
		}
		out[orig] = o
	}
	return out
}

// object reads a JSON object field as a map, checking it encodes again.
func (r *reader) object(key string) map[string]any {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(key, "want an object, not %s", kind(v))
		return nil
	}
	if _, err := json.Marshal(m); err != nil {
		r.fail(key, "%v", fmt.Errorf("cannot be encoded: %w", err))
		return nil
	}
	return m
}
