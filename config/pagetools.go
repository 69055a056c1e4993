package config

import (
	"fmt"
	"path"
	"time"
)

// PageTools is browser.pageTools: the tools websites register in the
// user's tabs (WebMCP), listed as mcpx tools. The zero value is the
// default: on, in the tabs mcpx drives, cached when a tab closes, for the
// sites the model opened in this session.
type PageTools struct {
	// Disabled turns page tools off ("enabled": false).
	Disabled bool
	// AllTabs looks into every open tab the extension reports, not only
	// the tabs mcpx drives.
	AllTabs bool
	// NoCache forgets a page's tools when its tab closes or leaves the
	// page ("cache": false); by default each tool stays listed with the
	// page that registered it, and a call opens that page again.
	NoCache bool
	// Allow and Deny are globs on host names ("*.example.com"). Deny
	// wins. An empty Allow means the sites the model itself opened in
	// this session.
	Allow, Deny []string
	// Interval is how often tabs are checked again; 0 means 1s. At most
	// 2s, so that a tool a page adds or removes shows within 2s.
	Interval time.Duration
}

// maxPageToolsInterval keeps discovery within the 2 s a page's change
// must show in.
const maxPageToolsInterval = 2 * time.Second

// pageTools reads browser.pageTools: an object, or a boolean as a
// shorthand for enabled.
func (r *reader) pageTools() PageTools {
	var pt PageTools
	v, ok := r.get("pageTools")
	if !ok {
		return pt
	}
	if b, isBool := v.(bool); isBool {
		pt.Disabled = !b
		return pt
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		r.fail("pageTools", "want an object (or true/false), not %s", kind(v))
		return pt
	}
	sub := &reader{p: r.p, prefix: r.prefix + "pageTools.", m: m, unset: r.unset}
	if on, ok := sub.boolean("enabled"); ok {
		pt.Disabled = !on
	}
	pt.AllTabs, _ = sub.boolean("allTabs")
	if cache, ok := sub.boolean("cache"); ok {
		pt.NoCache = !cache
	}
	pt.Allow = sub.list("allow", false)
	pt.Deny = sub.list("deny", false)
	for _, l := range []struct {
		name string
		pats []string
	}{{"allow", pt.Allow}, {"deny", pt.Deny}} {
		for i, pat := range l.pats {
			if _, err := path.Match(pat, ""); err != nil || pat == "" {
				sub.fail(fmt.Sprintf("%s[%d]", l.name, i), "bad host glob %q (want e.g. \"*.example.com\")", pat)
			}
		}
	}
	if d, ok := sub.duration("interval", false); ok {
		if d > maxPageToolsInterval {
			sub.fail("interval", "at most %s, so that a page's new or removed tools show within 2s", maxPageToolsInterval)
		}
		pt.Interval = d
	}
	sub.warnUnknown("enabled", "allTabs", "cache", "allow", "deny", "interval")
	if sub.err != nil && r.err == nil {
		r.err = sub.err
	}
	return pt
}
