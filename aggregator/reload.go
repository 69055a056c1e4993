package aggregator

import (
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// Clients returns the upstreams now configured, in config order.
func (a *Aggregator) Clients() []*upstream.Client { return a.clients() }

func (a *Aggregator) clients() []*upstream.Client {
	a.srvMu.RLock()
	defer a.srvMu.RUnlock()
	return a.upstreams
}

// Reload applies a new config's servers to a started Aggregator, as
// [config.Compare] found them: added servers start, removed ones stop,
// changed ones restart, and the others are not disturbed. Clients are told
// which lists changed. The top-level settings (expose, separator, browser)
// take effect at the next start; Reload logs when they differ.
func (a *Aggregator) Reload(next *config.Config, ch config.Changes) {
	if a.ctx == nil {
		return // not started
	}
	if next.Expose != a.cfg.Expose || next.Separator != a.cfg.Separator || !sameBrowser(a.cfg.Browser, next.Browser) {
		a.log.Warn("config reloaded: expose, separator and browser changes take effect when mcpx restarts")
	}
	restart := map[string]bool{}
	for _, n := range slices.Concat(ch.Added, ch.Changed) {
		restart[n] = true
	}
	uo := a.uo
	root := a.root()
	root.levels.mu.Lock()
	level := root.levels.applied // what a new server is set to, as the others were
	root.levels.mu.Unlock()
	a.srvMu.Lock()
	old := map[string]*upstream.Client{}
	for _, c := range a.upstreams {
		old[c.Name()] = c
	}
	for _, s := range next.Servers {
		if c, ok := old[s.Name]; ok && restart[s.Name] && onlyShaping(c.Config(), s) {
			// Only how mcpx shows it changed (prefix, filters): the
			// running server is kept.
			delete(restart, s.Name)
		}
	}
	members := make([]*member, 0, len(next.Servers)+2)
	var last []*member
	for _, m := range a.members {
		switch _, ok := m.src.(*upstream.Client); {
		case ok:
		case a.pages != nil && m.src == Source(a.pages):
			last = append(last, m) // page tools stay last: they never shadow a name
		default:
			members = append(members, m) // the browser stays first
		}
	}
	var stop, start []*upstream.Client
	upstreams := make([]*upstream.Client, 0, len(next.Servers))
	for _, s := range next.Servers {
		if !a.runs(s) {
			continue
		}
		c, kept := old[s.Name]
		if !kept || restart[s.Name] {
			prev := c
			c = upstream.New(s, &uo)
			if kept {
				stop = append(stop, prev)
				c.Carry(prev) // the sessions' log level and subscriptions
			} else if level != "" {
				_ = c.SetLogLevel(a.ctx, level) // not connected: kept for its connect
			}
			start = append(start, c)
		}
		delete(old, s.Name)
		upstreams = append(upstreams, c)
		members = append(members, upstreamMember(c, next, s))
	}
	members = append(members, last...)
	for _, c := range old {
		stop = append(stop, c)
	}
	a.upstreams, a.members = upstreams, members
	// Profiles apply at once; other top-level settings wait for a restart.
	// A session on a profile since removed keeps its last definition.
	a.prof = next.Profile
	profs := maps.Clone(next.Profiles)
	for name, p := range a.profs {
		if _, ok := profs[name]; !ok {
			if profs == nil {
				profs = map[string]*config.Profile{}
			}
			profs[name] = p
		}
	}
	a.profs = profs
	a.srvMu.Unlock()

	for _, c := range start {
		c.Start(a.ctx)
	}
	if len(ch.Added)+len(ch.Removed)+len(ch.Changed) > 0 {
		a.log.Info("config reloaded", "added", ch.Added, "removed", ch.Removed, "changed", ch.Changed)
	}
	// The old ones stop in the background: a slow child must not hold up
	// the new catalog.
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		var wg sync.WaitGroup
		for _, c := range stop {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Close()
			}()
		}
		wg.Wait()
	}()
	a.Rebuild()
}

func sameBrowser(a, b *config.Browser) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.URL == b.URL && a.Token == b.Token && a.Extension == b.Extension && a.Prefix == b.Prefix &&
		a.CDP == b.CDP && a.Listen == b.Listen && slices.Equal(a.ExtensionIDs, b.ExtensionIDs)
}

// onlyShaping reports whether two entries of a server differ at most in
// how mcpx shows it (prefix, tool and prompt filters), which needs no
// restart.
func onlyShaping(prev, next config.Server) bool {
	prev.Prefix, prev.Tools, prev.Prompts = next.Prefix, next.Tools, next.Prompts
	return reflect.DeepEqual(prev, next)
}
