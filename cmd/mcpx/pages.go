package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/aggregator"
)

// pageJSON is the page tools (WebMCP) in `mcpx servers --json`: the
// tools websites registered in the browser's tabs, by site.
type pageJSON struct {
	Name       string     `json:"name"`
	Tools      int        `json:"tools"`
	Sites      []pageSite `json:"sites"`
	Collisions []string   `json:"collisions,omitempty"`
}

// pageSite is one domain with its tabs (numbers as in the tool names and
// descriptions); Cached means its tab is closed and a call reopens it.
type pageSite struct {
	Domain string `json:"domain"`
	Tabs   []int  `json:"tabs,omitempty"`
	Cached bool   `json:"cached,omitempty"`
	Tools  int    `json:"tools"`
}

// pageRow summarises the page tools of the catalog; nil when there are
// none and none were hidden.
func pageRow(c *aggregator.Catalog, collisions []string) *pageJSON {
	p := &pageJSON{Name: aggregator.PageServerName, Collisions: collisions}
	bySite := map[string]*pageSite{}
	for _, e := range c.Tools {
		if e.Server != aggregator.PageServerName {
			continue
		}
		p.Tools++
		var v struct {
			Meta map[string]struct {
				Domain string `json:"domain"`
				Tab    int    `json:"tab"`
				Tabs   []int  `json:"tabs"`
				Cached bool   `json:"cached"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(e.JSON, &v)
		m := v.Meta["mcpx/page"]
		s := bySite[m.Domain]
		if s == nil {
			s = &pageSite{Domain: m.Domain, Cached: m.Cached}
			bySite[m.Domain] = s
		}
		s.Tools++
		for _, n := range append(m.Tabs, m.Tab) {
			if n > 0 && !slices.Contains(s.Tabs, n) {
				s.Tabs = append(s.Tabs, n)
			}
		}
	}
	if p.Tools == 0 && len(collisions) == 0 {
		return nil
	}
	for _, d := range slices.Sorted(maps.Keys(bySite)) {
		s := bySite[d]
		slices.Sort(s.Tabs)
		p.Sites = append(p.Sites, *s)
	}
	return p
}

// tableRow renders the page tools as a row of `mcpx servers`.
func (p *pageJSON) tableRow() []string {
	var sites []string
	for _, s := range p.Sites {
		switch {
		case s.Cached:
			sites = append(sites, s.Domain+" (tab closed)")
		case len(s.Tabs) == 1:
			sites = append(sites, fmt.Sprintf("%s (tab %d)", s.Domain, s.Tabs[0]))
		default:
			tabs := make([]string, len(s.Tabs))
			for i, n := range s.Tabs {
				tabs[i] = fmt.Sprint(n)
			}
			sites = append(sites, fmt.Sprintf("%s (tabs %s)", s.Domain, strings.Join(tabs, ", ")))
		}
	}
	note := strings.Join(sites, ", ")
	if n := len(p.Collisions); n > 0 {
		note = joinNonEmpty(note, fmt.Sprintf("%d name collision(s): %s", n, p.Collisions[0]))
	}
	return []string{p.Name, "browser tabs", "connected", fmt.Sprint(p.Tools), "0", "0", "", "", note}
}
