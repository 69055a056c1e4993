package pagetools

import (
	"fmt"
	"slices"
	"testing"
)

// TestCacheRules walks the cache through what pages do: a second page of
// a site adds its tools beside the first's, a page that takes a tool back
// drops it, a page that goes keeps its tools with its URL, and the cache
// stays bounded.
func TestCacheRules(t *testing.T) {
	h := New(Options{})
	tab := func(id, url string, tools ...string) *tabState {
		st := &tabState{id: id, url: url, host: hostOf(url)}
		for _, n := range tools {
			st.tools = append(st.tools, pageTool{name: n, listed: n})
		}
		return st
	}
	urlOf := func(name string) string {
		t.Helper()
		c := h.cache[toolKey{"shop.test", name}]
		if c == nil {
			return ""
		}
		return c.url
	}
	want := func(step string, urls map[string]string) {
		t.Helper()
		for name, u := range urls {
			if got := urlOf(name); got != u {
				t.Errorf("%s: %s cached from %q; want %q", step, name, got, u)
			}
		}
	}

	h.remember(tab("1", "http://shop.test/b", "add", "compare"))
	h.remember(tab("2", "http://shop.test/a", "add", "coupon"))
	want("a second page of the site", map[string]string{
		"compare": "http://shop.test/b", "coupon": "http://shop.test/a", "add": "http://shop.test/a"})

	h.remember(tab("2", "http://shop.test/a", "add"))
	want("a page took a tool back", map[string]string{"coupon": "", "add": "http://shop.test/a", "compare": "http://shop.test/b"})

	h.remember(tab("1", "http://shop.test/c"))
	want("a tab left its page", map[string]string{"compare": "http://shop.test/b", "add": "http://shop.test/a"})

	for i := range maxCached + 10 {
		h.checks++
		h.remember(tab("3", fmt.Sprintf("http://shop.test/p%d", i), fmt.Sprintf("t%d", i)))
	}
	if len(h.cache) != maxCached {
		t.Errorf("%d tools cached; want at most %d", len(h.cache), maxCached)
	}
	last := fmt.Sprintf("t%d", maxCached+9)
	if urlOf("compare") != "" || urlOf(last) == "" {
		t.Errorf("past the bound: compare kept %v, %s kept %v; want the tool seen longest ago gone, the newest kept",
			urlOf("compare") != "", last, urlOf(last) != "")
	}

	var names []string
	for _, c := range h.cachedOf("shop.test", map[string]bool{last: true}) {
		names = append(names, c.tool.name)
	}
	if len(names) != maxCached-1 || slices.Contains(names, last) || !slices.IsSorted(names) {
		t.Errorf("cachedOf lists %d tools, %s among them %v, sorted %v; want the %d no open page offers, sorted",
			len(names), last, slices.Contains(names, last), slices.IsSorted(names), maxCached-1)
	}
}
