package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/viper"
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

// settings layers expose and separator with a private viper instance:
// flag > MCPX_* environment variable > file > default. Viper's own env layer
// reads only the process environment, so to honour LoadOptions.LookupEnv
// the variables are merged over the file's values instead; the order comes
// out the same. An empty variable counts as unset, as in viper.
func (p *parser) settings(tree map[string]any, o *LoadOptions) {
	v := viper.New()
	source := map[string]*Error{} // where each value came from, for errors
	fileVals, envVals := map[string]any{}, map[string]any{}
	for _, s := range scalarSettings {
		v.SetDefault(s.key, s.def)
		source[s.key] = &Error{Field: s.key}
		if raw, ok := tree[s.key]; ok {
			str, ok := raw.(string)
			if !ok {
				p.fail("", s.key, "want a string, not "+kind(raw))
				continue
			}
			fileVals[s.key] = str
			source[s.key] = &Error{File: p.file, Field: s.key}
		}
		if val, ok := o.LookupEnv(s.env); ok && val != "" {
			envVals[s.key] = val
			source[s.key] = &Error{Field: s.env}
		}
		if val, ok := s.value(o); ok {
			// BindFlagValue only fails on a nil flag.
			_ = v.BindFlagValue(s.key, flagValue{name: s.flag, value: val})
			source[s.key] = &Error{Field: s.flag}
		}
	}
	_ = v.MergeConfigMap(fileVals) // cannot fail
	_ = v.MergeConfigMap(envVals)

	bad := func(key, msg string) {
		e := *source[key]
		e.Msg = msg
		p.errs = append(p.errs, &e)
	}
	expose := Expose(v.GetString("expose"))
	if !slices.Contains([]Expose{ExposeProxy, ExposeDirect, ExposeBoth}, expose) {
		bad("expose", fmt.Sprintf("unknown expose %q (want proxy, direct or both)", expose))
	}
	sep := v.GetString("separator")
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

// flagValue is a set flag, as viper.BindFlagValue wants it.
type flagValue struct{ name, value string }

func (f flagValue) HasChanged() bool    { return true }
func (f flagValue) Name() string        { return f.name }
func (f flagValue) ValueString() string { return f.value }
func (f flagValue) ValueType() string   { return "string" }
