package aggregator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// ToolServers names the servers a call of the tool exposed as name needs,
// so that a command waits for those alone rather than for every server:
// the server the catalog (live or remembered) files the name under; else
// the enabled servers whose prefix and separator start the name, the
// longest prefix winning, or, when no prefix matches, the servers with
// none. nil means the name tells nothing about its server (mcpx's own
// tools, the browser's, or a name no prefix matches): wait for every
// server, so that every name is known.
func (a *Aggregator) ToolServers(name string) []string {
	if name == proxytool.Name { // it lists and calls every server's tools
		return nil
	}
	a.srvMu.RLock()
	defer a.srvMu.RUnlock()
	if e, ok := a.Catalog().Tool(name); ok {
		if a.upstream(e.Server) != nil {
			return []string{e.Server}
		}
		return nil
	}
	var best []string
	bestLen := -1
	for _, m := range a.members {
		c, ok := m.src.(*upstream.Client)
		if !ok || !c.Config().Enabled {
			continue
		}
		p := namePrefix(m.prefix, a.cfg.Separator)
		switch {
		case !strings.HasPrefix(name, p) || len(p) < bestLen:
		case len(p) > bestLen:
			best, bestLen = []string{c.Name()}, len(p)
		default:
			best = append(best, c.Name())
		}
	}
	return best
}

// upstream returns the upstream named name, or nil. srvMu must be held.
func (a *Aggregator) upstream(name string) *upstream.Client {
	for _, c := range a.upstreams {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// WaitServers waits until each named server has finished its first
// connect attempt, or ReadyTimeout passed, and the catalog reflects
// them; the other servers go on starting meanwhile. No names, or a name
// that is no upstream (the browser's), waits for everything as
// [Aggregator.WaitReady] does.
func (a *Aggregator) WaitServers(ctx context.Context, names []string) error {
	a.srvMu.RLock()
	var clients []*upstream.Client
	all := len(names) == 0
	for _, n := range names {
		c := a.upstream(n)
		if c == nil {
			all = true
			break
		}
		clients = append(clients, c)
	}
	a.srvMu.RUnlock()
	if all {
		return a.WaitReady(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, a.opts.ReadyTimeout)
	defer cancel()
	upstream.WaitReady(wctx, clients)
	if err := ctx.Err(); err != nil {
		return err
	}
	a.Rebuild()
	return nil
}

// reportHidden logs, for each server that lost names to another one, a
// single line with how many; each name is logged at debug level. A
// server's line comes again only when it loses more names, not at every
// rebuild.
func (a *Aggregator) reportHidden(c *Catalog) {
	hidden := map[string]int{}
	for _, col := range c.Collisions {
		if s := col.String(); !a.reported[s] {
			a.reported[s] = true
			a.log.Debug("name collision: " + s)
		}
		hidden[col.Dropped]++
	}
	servers := make([]string, 0, len(hidden))
	for s := range hidden {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	for _, s := range servers {
		if n := hidden[s]; n > a.hidden[s] {
			a.hidden[s] = n
			a.log.Warn(fmt.Sprintf("server %s: %d of its names are hidden: other servers have them (mcpx servers shows which; --log-level debug logs each)", s, n))
		}
	}
}
