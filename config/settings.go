package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// setting is a top-level scalar that flags and MCPX_* variables override.
type setting struct {
	key, env, flag string
	def            string
	value          func(o *LoadOptions) (string, bool) // the flag's value, if set
}

var scalarSettings = []setting{
	{key: "expose", env: "MCPX_EXPOSE", flag: "--expose", def: string(ExposeProxy),
		value: func(o *LoadOptions) (string, bool) { return o.Expose, o.Expose != "" }},
	{key: "separator", env: "MCPX_SEPARATOR", flag: "--separator", def: DefaultSeparator,
		value: func(o *LoadOptions) (string, bool) {
			if o.Separator == nil {
				return "", false
			}
			return *o.Separator, true
		}},
}

// settings layers expose and separator: flag > MCPX_* environment
// variable (read through LoadOptions.LookupEnv) > file > default. An empty
// variable counts as unset; an empty flag or file value does not.
func (p *parser) settings(tree map[string]any, o *LoadOptions) {
	vals := map[string]string{}
	source := map[string]*Error{} // where each value came from, for errors
	for _, s := range scalarSettings {
		vals[s.key] = s.def
		source[s.key] = &Error{Field: s.key}
		if raw, ok := tree[s.key]; ok {
			str, ok := raw.(string)
			if !ok {
				p.fail("", s.key, "want a string, not "+kind(raw))
				continue
			}
			vals[s.key] = str
			source[s.key] = &Error{File: p.file, Field: s.key}
		}
		if val, ok := o.LookupEnv(s.env); ok && val != "" {
			vals[s.key] = val
			source[s.key] = &Error{Field: s.env}
		}
		if val, ok := s.value(o); ok {
			vals[s.key] = val
			source[s.key] = &Error{Field: s.flag}
		}
	}

	bad := func(key, msg string) {
		e := *source[key]
		e.Msg = msg
		p.errs = append(p.errs, &e)
	}
	expose := Expose(vals["expose"])
	if !slices.Contains([]Expose{ExposeProxy, ExposeDirect, ExposeBoth}, expose) {
		bad("expose", fmt.Sprintf("unknown expose %q (want proxy, direct or both)", expose))
	}
	sep := vals["separator"]
	switch {
	case strings.ContainsFunc(sep, unicode.IsControl):
		bad("separator", "contains a control character")
	case strings.ContainsFunc(sep, notNameChar):
		// Allowed (a client may accept more), but said: every exposed
		// name shows _ where the file says something else.
		w := *source["separator"]
		w.Msg = fmt.Sprintf("%q has a character tool names may not have (clients accept letters, digits, _ and -): "+
			"every prefixed tool and prompt name shows _ in its place; use _ or -", sep)
		p.cfg.Warnings = append(p.cfg.Warnings, w.Error())
	}
	p.cfg.Expose, p.cfg.Separator = expose, sep
}

// notNameChar reports a rune outside what clients accept in a tool name,
// ^[a-zA-Z0-9_-]{1,64}$ (see aggregator/names.go).
func notNameChar(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
}
