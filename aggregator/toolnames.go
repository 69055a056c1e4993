package aggregator

import (
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/scan"
)

// ToolNames indexes the catalog's tool names, exposed and as their
// servers name them, each with its server: what the scanner's shadowing
// rule matches a text against (see [scan.Names]). Made once.
func (c *Catalog) ToolNames() *scan.Names {
	c.namesOnce.Do(func() {
		c.names = &scan.Names{}
		for _, e := range c.Tools {
			c.names.Add(e.Server, e.Original)
			c.names.Add(e.Server, e.Name)
		}
	})
	return c.names
}

// memberNames is [Catalog.ToolNames] for a catalog still being built:
// made from the members' lists, when first asked for (a server's first
// sight asks), at most once per build.
func memberNames(members []*member, sep string) func() *scan.Names {
	var n *scan.Names
	return func() *scan.Names {
		if n != nil {
			return n
		}
		n = &scan.Names{}
		for _, m := range members {
			server := m.src.Name()
			for _, raw := range m.src.Tools() {
				var name string
				_ = rawjson.Scan(raw, func(k rawjson.Key, v []byte) bool {
					if k.Is("name") {
						name, _ = rawjson.String(v)
					}
					return true
				})
				if name == "" {
					continue
				}
				n.Add(server, name)
				if exposed, _ := exposedName(m.prefix, sep, name); exposed != name {
					n.Add(server, exposed)
				}
			}
		}
		return n
	}
}
