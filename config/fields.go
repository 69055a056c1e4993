package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode"
)

// reader reads the fields of one object (a server entry or the browser
// section), type-checking and expanding them. It keeps the first problem in
// err and then does nothing more, so one bad server yields one error.
//
// No message it writes contains a field's value: values may be secrets.
type reader struct {
	p      *parser
	server string         // the server's name; "" for the browser section
	prefix string         // put before field names: "" or "browser."
	m      map[string]any // the object
	// unset collects the ${VAR} references that are not set, shared with
	// sub-readers; nil makes such a reference an error.
	unset *unsetVars
	// typosOnly makes warnUnknown quiet about a key unless it is close
	// to a known one (in a file another program shares).
	typosOnly bool
	err       *Error
}

// unsetVars is what a section's unset ${VAR} references come to: one
// "NAME is not set (field)" per variable, where it was first used. It
// never holds a value.
type unsetVars struct {
	names []string
	msgs  []string
}

func (u *unsetVars) add(name, field string) {
	if slices.Contains(u.names, name) {
		return
	}
	u.names = append(u.names, name)
	u.msgs = append(u.msgs, fmt.Sprintf("%s is not set (%s)", name, field))
}

// String is every unset variable with where it is used, "" for none.
func (u *unsetVars) String() string {
	if u == nil {
		return ""
	}
	return strings.Join(u.msgs, "; ")
}

func (r *reader) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = &Error{File: r.p.file, Server: r.server, Field: r.prefix + field, Msg: fmt.Sprintf(format, args...)}
	}
}

// get returns the value of key; a null counts as absent.
func (r *reader) get(key string) (any, bool) {
	v, ok := r.m[key]
	return v, ok && v != nil && r.err == nil
}

// warnUnknown adds a warning for each key not in known, naming the
// closest known key when one is close.
func (r *reader) warnUnknown(known ...string) {
	for _, k := range slices.Sorted(maps.Keys(r.m)) {
		if slices.Contains(known, k) {
			continue
		}
		if msg := unknownKey(k, known, r.typosOnly); msg != "" {
			r.p.warn(r.server, r.prefix+k, msg)
		}
	}
}

func (r *reader) str(key string) (string, bool) {
	v, ok := r.get(key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		r.fail(key, "want a string, not %s", kind(v))
		return "", false
	}
	return s, true
}

func (r *reader) boolean(key string) (bool, bool) {
	v, ok := r.get(key)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		r.fail(key, "want true or false, not %s", kind(v))
	}
	return b, ok
}

// label is a string with no control characters (a prefix, a separator).
func (r *reader) label(key string) (string, bool) {
	s, ok := r.str(key)
	if ok && strings.ContainsFunc(s, unicode.IsControl) {
		r.fail(key, "contains a control character")
		return "", false
	}
	return s, ok
}

// expanded reads a string field and expands ${VAR} in it. missing reports
// an unset variable, collected in r.unset.
func (r *reader) expanded(key string) (s string, ok, missing bool) {
	s, ok = r.str(key)
	if !ok {
		return "", false, false
	}
	s, missing = r.expand(key, s)
	return s, r.err == nil, missing
}

// expand expands ${VAR} in the value of field; label is how the field is
// named where an unset variable is reported ("env GITHUB_TOKEN").
func (r *reader) expand(field, s string) (string, bool) {
	return r.expandAs(field, r.prefix+field, s)
}

func (r *reader) expandAs(field, label, s string) (string, bool) {
	if r.err != nil {
		return "", false
	}
	out, subst, missing, err := expand(s, r.p.lookup)
	switch {
	case err != nil:
		r.fail(field, "%v", err)
	case len(missing) > 0 && r.unset == nil:
		r.fail(field, "variable %s is not set", missing[0])
	}
	if r.unset != nil {
		for _, name := range missing {
			r.unset.add(name, label)
		}
	}
	r.p.cfg.substituted = append(r.p.cfg.substituted, subst...)
	return out, len(missing) > 0
}

// list reads a list of strings; expand says whether ${VAR} expands in it.
func (r *reader) list(key string, expand bool) []string {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		r.fail(key, "want a list of strings, not %s", kind(v))
		return nil
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		field := fmt.Sprintf("%s[%d]", key, i)
		s, ok := item.(string)
		if !ok {
			r.fail(field, "want a string, not %s", kind(item))
			return nil
		}
		if expand {
			s, _ = r.expand(field, s)
		}
		out = append(out, s)
	}
	return out
}

// stringMap reads an object of strings (env, headers) and expands its
// values. Numbers and booleans become strings: people write "PORT": 3000.
func (r *reader) stringMap(key string) map[string]string {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(key, "want an object of strings, not %s", kind(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" {
			r.fail(key, "empty name")
			return nil
		}
		field := key + "." + k
		var s string
		switch v := m[k].(type) {
		case string:
			s = v
		case json.Number:
			s = string(v)
		case bool:
			s = fmt.Sprint(v)
		default:
			r.fail(field, "want a string, not %s", kind(v))
			return nil
		}
		out[k], _ = r.expandAs(field, r.prefix+key+" "+k, s)
	}
	return out
}

// filter reads {"allow": [...], "deny": [...], "override": {...}} and
// checks each glob.
func (r *reader) filter(key string) Filter {
	v, ok := r.get(key)
	if !ok {
		return Filter{}
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(key, "want an object with allow and deny lists, not %s", kind(v))
		return Filter{}
	}
	sub := &reader{p: r.p, server: r.server, prefix: r.prefix + key + ".", m: m}
	f := Filter{Allow: sub.list("allow", false), Deny: sub.list("deny", false)}
	for _, l := range []struct {
		name string
		pats []string
	}{{"allow", f.Allow}, {"deny", f.Deny}} {
		for i, pat := range l.pats {
			if _, err := path.Match(pat, ""); err != nil {
				sub.fail(fmt.Sprintf("%s[%d]", l.name, i), "bad glob %q: %v", pat, err)
			}
		}
	}
	f.Override = sub.overrides("override", key == "tools")
	sub.warnUnknown("allow", "deny", "override")
	if sub.err != nil && r.err == nil {
		r.err = sub.err
	}
	return f
}

// kind names a tree value's type for messages, without its value.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
