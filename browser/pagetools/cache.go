package pagetools

import (
	"slices"
	"strings"
)

// The cache keeps each tool with the page that registered it, so that
// when that page goes (its tab closed, or navigated elsewhere) the tool
// stays listed and a call opens that very page again. It is kept per
// tool, not per site: two pages of one site offer different tools, and
// the tools of one must not push out the other's.

// maxCached bounds the cache; past it the tools seen longest ago go.
const maxCached = 1024

// toolKey names a cached tool: its site and the page's own name for it.
type toolKey struct{ host, name string }

// cached is a tool as the page that registered it last offered it.
type cached struct {
	tool pageTool
	url  string // the page's URL, to open it again
	tab  string // the tab it was seen in
	seen uint64 // the check that last saw it
}

// remember records the tools st offers now, each with st's page, and
// drops those st's page offered before and took back. A tool the same
// page no longer offers is gone; one of a page that went (the tab
// navigated to another URL) stays. h.mu is held.
func (h *Hub) remember(st *tabState) {
	offered := make(map[string]bool, len(st.tools))
	for _, t := range st.tools {
		offered[t.name] = true
	}
	for k, c := range h.cache {
		if c.tab == st.id && c.url == st.url && k.host == st.host && !offered[k.name] {
			delete(h.cache, k)
		}
	}
	for _, t := range st.tools {
		h.cache[toolKey{st.host, t.name}] = &cached{tool: t, url: st.url, tab: st.id, seen: h.checks}
	}
	for len(h.cache) > maxCached {
		h.evictOldest()
	}
}

// evictOldest drops the cached tool seen longest ago. h.mu is held.
func (h *Hub) evictOldest() {
	var oldest toolKey
	var first *cached
	for k, c := range h.cache {
		if first == nil || c.seen < first.seen {
			oldest, first = k, c
		}
	}
	delete(h.cache, oldest)
}

// cachedOf returns the cached tools of host that no open tab offers,
// sorted by listed name. h.mu is held.
func (h *Hub) cachedOf(host string, live map[string]bool) []*cached {
	var out []*cached
	for k, c := range h.cache {
		if k.host == host && !live[k.name] {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *cached) int { return strings.Compare(a.tool.listed, b.tool.listed) })
	return out
}
