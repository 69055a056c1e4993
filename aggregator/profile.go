package aggregator

import (
	"maps"
	"slices"

	"github.com/mcpx/mcpx/config"
)

// restrict narrows c to what profile p shows: the capabilities of its
// servers, and of those the tools and prompts whose exposed names its
// tools filter lets through. Names were settled over the whole catalog
// first, so a capability has the same name in every profile.
func (c *Catalog) restrict(p *config.Profile) {
	if p == nil {
		return
	}
	out := func(e *Entry) bool { return !p.Includes(e.Server) }
	outNamed := func(e *Entry) bool {
		if !out(e) && p.Tools.Allows(e.Name) {
			return false
		}
		// Kept to say why the name is unknown, should it be asked for.
		c.filtered = append(c.filtered, &Filtered{Kind: e.Kind, Name: e.Name, Original: e.Original, Server: e.Server, Profile: p.Name})
		return true
	}
	c.Tools = slices.DeleteFunc(c.Tools, outNamed)
	c.Prompts = slices.DeleteFunc(c.Prompts, outNamed)
	c.Resources = slices.DeleteFunc(c.Resources, out)
	c.ResourceTemplates = slices.DeleteFunc(c.ResourceTemplates, out)
	for _, index := range []map[string]*Entry{c.tools, c.prompts, c.resources} {
		for name, e := range index {
			if e.Kind == KindResource && out(e) || e.Kind != KindResource && (out(e) || !p.Tools.Allows(e.Name)) {
				delete(index, name)
			}
		}
	}
	c.items = c.proxyItems()
	c.search.restrict(c)
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
