package aggregator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// Owners names the servers that serve what name stands for as one of
// kinds (tried in order), so that a command starts and waits for those
// alone rather than for every server. found says that the catalog, live
// or remembered from an earlier run, has the name: servers is then the
// one that serves it. Else, for a tool or a prompt, servers are the
// enabled servers whose prefix and separator start the name, the longest
// prefix winning, or, when no prefix matches, the servers with none. nil
// means the name tells nothing about its server (mcpx's own tools, the
// browser's, a name several servers have, a resource no catalog lists,
// a name no prefix matches): every server is needed, so that every name
// is known.
func (a *Aggregator) Owners(name string, kinds ...proxytool.Kind) (servers []string, found bool) {
	if name == proxytool.Name { // it lists and calls every server's tools
		return nil, false
	}
	a.srvMu.RLock()
	defer a.srvMu.RUnlock()
	c := a.Catalog()
	for _, k := range kinds {
		e, err := c.Find(k, name)
		if errors.Is(err, proxytool.ErrNotFound) {
			continue
		}
		if err != nil || a.upstream(e.Server) == nil {
			return nil, false // ambiguous, or not an upstream's
		}
		return []string{e.Server}, true
	}
	if !slices.ContainsFunc(kinds, func(k proxytool.Kind) bool { return k != proxytool.KindResource }) {
		return nil, false // URIs carry no prefix
	}
	return a.byPrefix(name), false
}

// byPrefix names the enabled servers whose prefix and separator start
// name, the longest prefix winning, or, when none matches, the servers
// with no prefix. srvMu must be held.
func (a *Aggregator) byPrefix(name string) []string {
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

// WaitServers starts the named servers if they are not started yet (see
// [Aggregator.StartServers]) and waits until each has finished its first
// connect attempt, or ReadyTimeout passed, and the catalog reflects
// them; the other servers started go on starting meanwhile. No names, or
// a name that is no upstream (the browser's), starts and waits for
// everything as [Aggregator.WaitReady] does.
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
		a.StartServers(nil)
		return a.WaitReady(ctx)
	}
	a.StartServers(names)
	wctx, cancel := context.WithTimeout(ctx, a.opts.ReadyTimeout)
	defer cancel()
	upstream.WaitReady(wctx, clients)
	if err := ctx.Err(); err != nil {
		return err
	}
	a.Rebuild()
	return nil
}

// WaitStarted waits until every upstream has finished its first
// connect attempt (a lazy one gone to sleep counts), however long that
// takes, and the catalog reflects them, its search indexes made: the
// start is over, and what it left behind is garbage. It returns ctx's
// error if ctx ends first.
func (a *Aggregator) WaitStarted(ctx context.Context) error {
	a.StartServers(nil)
	upstream.WaitReady(ctx, a.clients())
	if err := ctx.Err(); err != nil {
		return err
	}
	a.Rebuild()
	a.Catalog().search.warm()
	return nil
}

// reportHidden logs, for each server that lost names to another one, a
// single line with how many; each name is logged at debug level. A
// server's line comes again only when it loses more names, not at every
// rebuild. The servers in idle (not started) are left for later.
func (a *Aggregator) reportHidden(c *Catalog, idle []string) {
	hidden := map[string]int{}
	// Each collision is logged once, at debug level only: not kept, or
	// even written, when that level is off (many servers of the same
	// resources held megabytes of these lines).
	debug := a.log.Enabled(context.Background(), slog.LevelDebug)
	for _, col := range c.Collisions {
		hidden[col.Dropped]++
		if !debug {
			continue
		}
		if s := col.String(); !a.reported[s] {
			a.reported[s] = true
			a.log.Debug("name collision: " + s)
		}
	}
	servers := make([]string, 0, len(hidden))
	for s := range hidden {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	for _, s := range servers {
		if n := hidden[s]; n > a.hidden[s] && !slices.Contains(idle, s) {
			a.hidden[s] = n
			a.log.Warn(fmt.Sprintf("server %s: %d of its names are hidden: other servers have them (mcpx servers shows which; --log-level debug logs each)", s, n))
		}
	}
}
