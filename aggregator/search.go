package aggregator

import (
	"sync"

	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/search"
)

// catalogSearch is a catalog's ranked search (package search): one index
// per kind over the capabilities as built, before a profile narrowed
// them, so that every session and profile over the same servers finds
// the same index in the shared builder and filters it as it searches.
// An index is made when first asked for, or by warm after a rebuild, off
// the path of any request.
type catalogSearch struct {
	builder      *search.Builder // shared by an Aggregator and its sessions' own; nil: one of its own
	instructions map[string]string
	kinds        [3]kindSearch
}

// kindSearch is the index of one kind of capability.
type kindSearch struct {
	built   *builtIndex      // shared by the catalog and its profiles' views
	items   []proxytool.Item // as indexed, before any profile
	entries []*Entry         // the same, as entries
	// visible is, per item, whether the catalog's profile shows it; nil
	// shows every one.
	visible []bool
}

// builtIndex is an index made when first asked for.
type builtIndex struct {
	once sync.Once
	ix   *search.Index
}

func kindIndex(k proxytool.Kind) int {
	switch k {
	case proxytool.KindTool:
		return 0
	case proxytool.KindResource:
		return 1
	}
	return 2
}

// newCatalogSearch readies the search of catalog c as built, over the
// servers' instructions.
func newCatalogSearch(b *search.Builder, c *Catalog, instructions map[string]string) *catalogSearch {
	s := &catalogSearch{builder: b, instructions: instructions}
	for k, lists := range map[proxytool.Kind][][]*Entry{
		proxytool.KindTool:     {c.Tools},
		proxytool.KindResource: {c.Resources, c.ResourceTemplates},
		proxytool.KindPrompt:   {c.Prompts},
	} {
		ks := &s.kinds[kindIndex(k)]
		for _, l := range lists {
			ks.entries = append(ks.entries, l...)
		}
		ks.items = c.items[k]
		ks.built = &builtIndex{}
	}
	return s
}

// view returns a search over the same indexes for a view of the catalog
// (Catalog.View), which restrict then narrows.
func (s *catalogSearch) view() *catalogSearch {
	v := &catalogSearch{builder: s.builder, instructions: s.instructions, kinds: s.kinds}
	for i := range v.kinds {
		v.kinds[i].visible = nil
	}
	return v
}

// restrict marks what profile narrowing left of the catalog c visible.
func (s *catalogSearch) restrict(c *Catalog) {
	shown := map[*Entry]bool{}
	for _, l := range [][]*Entry{c.Tools, c.Resources, c.ResourceTemplates, c.Prompts} {
		for _, e := range l {
			shown[e] = true
		}
	}
	for i := range s.kinds {
		ks := &s.kinds[i]
		ks.visible = make([]bool, len(ks.entries))
		for j, e := range ks.entries {
			ks.visible[j] = shown[e]
		}
	}
}

// index returns the index of a kind, making it the first time.
func (ks *kindSearch) index(s *catalogSearch) *search.Index {
	b := ks.built
	b.once.Do(func() {
		docs := make([]search.Doc, len(ks.items))
		for i, it := range ks.items {
			docs[i] = search.Doc{Name: it.Name, Original: it.Original, Server: it.Server,
				Title: it.Title, Description: it.Description, JSON: it.JSON}
		}
		b.ix = s.builder.Build(docs, s.instructions)
	})
	return b.ix
}

// warm makes every kind's index now, so that the first query after a
// change does not wait for it.
func (s *catalogSearch) warm() {
	for i := range s.kinds {
		s.kinds[i].index(s)
	}
}

// search ranks the visible capabilities of a kind that keep allows (nil:
// all) for query; the hits index the items returned.
func (s *catalogSearch) search(kind proxytool.Kind, query string, keep func(*proxytool.Item) bool) ([]proxytool.Item, search.Result) {
	ks := &s.kinds[kindIndex(kind)]
	ix := ks.index(s)
	res := ix.Search(query, func(d int) bool {
		return (ks.visible == nil || ks.visible[d]) && (keep == nil || keep(&ks.items[d]))
	})
	return ks.items, res
}

// Search ranks the catalog's capabilities of a kind for a query, as the
// proxy tool's list does (package search); keep, when not nil, narrows
// them further. The hits index the items returned, which are the
// catalog's before its profile (the hits are only of those it shows).
func (c *Catalog) Search(kind proxytool.Kind, query string, keep func(*proxytool.Item) bool) ([]proxytool.Item, search.Result) {
	return c.searcher().search(kind, query, keep)
}

// searcher returns the catalog's search. A catalog build made has it; one
// decoded from another mcpx's terminal API (mcpx list --server-url) gets
// one when first searched, by the one goroutine that decoded it.
func (c *Catalog) searcher() *catalogSearch {
	if c.search == nil {
		c.items = c.proxyItems()
		c.search = newCatalogSearch(nil, c, nil)
	}
	return c.search
}

// Rank returns the catalog's tools, resources (with templates) or
// prompts that match query, best first, as the proxy tool ranks them.
func (c *Catalog) Rank(kind Kind, query string) []*Entry {
	k := proxytool.KindTool
	switch kind {
	case KindResource, KindTemplate:
		k = proxytool.KindResource
	case KindPrompt:
		k = proxytool.KindPrompt
	}
	s := c.searcher()
	_, res := s.search(k, query, nil)
	ks := &s.kinds[kindIndex(k)]
	out := make([]*Entry, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = ks.entries[h.Doc]
	}
	return out
}

var _ proxytool.Searcher = proxyCatalog{}

// Search is the catalog's ranked search, for the proxy tool's list.
func (p proxyCatalog) Search(kind proxytool.Kind, query string, keep func(*proxytool.Item) bool) ([]proxytool.Item, search.Result) {
	return p.a.Catalog().Search(kind, query, keep)
}
