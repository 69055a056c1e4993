package aggregator

import (
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
	outNamed := func(e *Entry) bool { return out(e) || !p.Tools.Allows(e.Name) }
	c.Tools = slices.DeleteFunc(c.Tools, outNamed)
	c.Prompts = slices.DeleteFunc(c.Prompts, outNamed)
	c.Resources = slices.DeleteFunc(c.Resources, out)
	c.ResourceTemplates = slices.DeleteFunc(c.ResourceTemplates, out)
	for _, index := range []map[string]*Entry{c.tools, c.prompts, c.resources} {
		for name, e := range index {
			if e.Kind == KindResource && out(e) || e.Kind != KindResource && outNamed(e) {
				delete(index, name)
			}
		}
	}
	c.items = c.proxyItems()
}

// profile is the profile the catalog is shown through; nil: all of it.
// A session's aggregator shows its parent's.
func (a *Aggregator) profile() *config.Profile {
	r := a.root()
	r.srvMu.RLock()
	defer r.srvMu.RUnlock()
	return r.prof
}
