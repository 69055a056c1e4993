package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Profile is one entry of the top-level profiles map: a view over the
// catalog for one client or task.
type Profile struct {
	Name string
	// Servers are the servers whose capabilities the profile shows; empty
	// means every server.
	Servers []string
	// Tools filters the tool and prompt names a client sees (after
	// prefix and overrides); deny wins.
	Tools Filter
}

// Includes reports whether the profile shows capabilities of server.
func (p *Profile) Includes(server string) bool {
	return len(p.Servers) == 0 || slices.Contains(p.Servers, server)
}

// profiles reads the top-level profiles map, then picks the one --profile
// or MCPX_PROFILE names. A profile naming a server the file does not have
// is an error that suggests the closest; so is choosing a profile the
// file does not define, naming the ones it does.
func (p *parser) profiles(tree map[string]any, o *LoadOptions) {
	if v, ok := tree["profiles"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			p.fail("", "profiles", "want an object of profiles, not "+kind(v))
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if prof, ok := p.profile(name, m[name]); ok {
				if p.cfg.Profiles == nil {
					p.cfg.Profiles = map[string]*Profile{}
				}
				p.cfg.Profiles[name] = prof
			}
		}
	}
	name, field := o.Profile, "--profile"
	if name == "" {
		if v, ok := o.LookupEnv("MCPX_PROFILE"); ok && v != "" {
			name, field = v, "MCPX_PROFILE"
		}
	}
	if name == "" {
		return
	}
	prof, ok := p.cfg.Profiles[name]
	if !ok {
		p.errs = append(p.errs, &Error{Field: field, Msg: UnknownProfile(name, p.cfg.ProfileNames())})
		return
	}
	p.cfg.Profile = prof
}

// UnknownProfile says that name is no profile, naming those there are.
func UnknownProfile(name string, known []string) string {
	if len(known) == 0 {
		return fmt.Sprintf("unknown profile %q: the config defines no profiles", name)
	}
	msg := fmt.Sprintf("unknown profile %q (the profiles: %s)", name, strings.Join(known, ", "))
	if near := closestKey(name, known); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return msg
}

// ProfileNames are the names of the profiles the config defines, sorted.
func (c *Config) ProfileNames() []string { return slices.Sorted(maps.Keys(c.Profiles)) }

func (p *parser) profile(name string, v any) (*Profile, bool) {
	field := "profiles." + name
	m, ok := v.(map[string]any)
	if !ok {
		p.fail("", field, "want an object with servers and tools, not "+kind(v))
		return nil, false
	}
	r := &reader{p: p, prefix: field + ".", m: m}
	prof := &Profile{Name: name, Servers: r.list("servers", false)}
	prof.Tools = r.filter("tools")
	if prof.Tools.Override != nil {
		r.fail("tools.override", "overrides belong under a server's tools (servers.NAME.tools.override), not a profile's")
	}
	r.warnUnknown("servers", "tools")
	known := make([]string, 0, len(p.cfg.Servers)+1)
	for _, s := range p.cfg.Servers {
		known = append(known, s.Name)
	}
	if p.cfg.Browser != nil {
		known = append(known, BrowserServerName)
	}
	for i, s := range prof.Servers {
		if r.err == nil && !slices.Contains(known, s) {
			msg := fmt.Sprintf("unknown server %q", s)
			if near := closestKey(s, known); near != "" {
				msg += "; did you mean " + near + "?"
			}
			r.fail(fmt.Sprintf("servers[%d]", i), "%s", msg)
		}
	}
	if r.err != nil {
		p.errs = append(p.errs, r.err)
		return nil, false
	}
	return prof, true
}
