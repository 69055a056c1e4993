package aggregator

import (
	"maps"
	"slices"

	"github.com/mcpx/mcpx/config"
)

// View returns the catalog as profile p shows it (nil: c itself): the
// capabilities of its servers, and of those the tools and prompts whose
// exposed names its tools filter lets through. Names were settled over
// the whole catalog, so a capability has the same name in every
// profile. A view is made from c when first asked for, sharing its
// entries and search indexes, and kept with c: every session shown a
// profile reads one view of one snapshot, and a rebuild makes each view
// once, from the new snapshot, not from the sources.
// c is a catalog as built, before any profile.
func (c *Catalog) View(p *config.Profile) *Catalog {
	if p == nil {
		return c
	}
	c.viewsMu.Lock()
	defer c.viewsMu.Unlock()
	if v, ok := c.views[p.Name]; ok && v.profile == p {
		return v
	}
	v := c.narrowed(p)
	if c.views == nil {
		c.views = map[string]*Catalog{}
	}
	c.views[p.Name] = v
	return v
}

// narrowed makes the view of c through p.
func (c *Catalog) narrowed(p *config.Profile) *Catalog {
	v := &Catalog{
		Tools: slices.Clone(c.Tools), Resources: slices.Clone(c.Resources),
		ResourceTemplates: slices.Clone(c.ResourceTemplates), Prompts: slices.Clone(c.Prompts),
		Collisions: c.Collisions, Problems: c.Problems, Hidden: c.Hidden, Reviews: c.Reviews,
		tools: maps.Clone(c.tools), resources: maps.Clone(c.resources), prompts: maps.Clone(c.prompts),
		servers: c.servers, run: c.run, profile: p,
		// Clipped, so that what the view adds is its own.
		filtered: slices.Clip(c.filtered),
	}
	v.search = c.searcher().view()
	out := func(e *Entry) bool { return !p.Includes(e.Server) }
	outNamed := func(e *Entry) bool {
		if !out(e) && p.Tools.Allows(e.Name) {
			return false
		}
		// Kept to say why the name is unknown, should it be asked for.
		v.filtered = append(v.filtered, &Filtered{Kind: e.Kind, Name: e.Name, Original: e.Original, Server: e.Server, Profile: p.Name})
		return true
	}
	v.Tools = slices.DeleteFunc(v.Tools, outNamed)
	v.Prompts = slices.DeleteFunc(v.Prompts, outNamed)
	v.Resources = slices.DeleteFunc(v.Resources, out)
	v.ResourceTemplates = slices.DeleteFunc(v.ResourceTemplates, out)
	for _, index := range []map[string]*Entry{v.tools, v.prompts, v.resources} {
		for name, e := range index {
			if e.Kind == KindResource && out(e) || e.Kind != KindResource && (out(e) || !p.Tools.Allows(e.Name)) {
				delete(index, name)
			}
		}
	}
	v.items = v.proxyItems()
	v.search.restrict(v)
	return v
}

// profile is the profile the catalog is shown through; nil: all of it.
// A session's aggregator shows the one it was made for, else its
// parent's.
func (a *Aggregator) profile() *config.Profile {
	r := a.root()
	r.srvMu.RLock()
	defer r.srvMu.RUnlock()
	if a.view != "" {
		return r.profs[a.view]
	}
	return r.prof
}

// HasProfile reports whether the config defines profile name, and
// otherwise says so, naming the profiles there are.
func (a *Aggregator) HasProfile(name string) (bool, string) {
	r := a.root()
	r.srvMu.RLock()
	defer r.srvMu.RUnlock()
	if _, ok := r.profs[name]; ok {
		return true, ""
	}
	return false, config.UnknownProfile(name, slices.Sorted(maps.Keys(r.profs)))
}
