package aggregator

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mcpx/mcpx/upstream"
)

// ErrNotRunning is returned by [Aggregator.Restart] for a name that is
// no running upstream (not configured, disabled, or a session's own).
var ErrNotRunning = errors.New("no such running server")

// Restart closes the upstream named name and connects it again, as a
// reload does for a server whose entry changed: a new client over the
// same entry takes its place at once (keeping the sessions' log level and
// subscriptions), the old one stops in the background, and clients are
// told which lists changed. It is what the dashboard's restart button
// does; the config is not touched.
func (a *Aggregator) Restart(name string) error {
	if a.ctx == nil || a.parent != nil {
		return fmt.Errorf("restart %s: the catalog is not started", name)
	}
	uo := a.uo
	a.srvMu.Lock()
	i := slices.IndexFunc(a.upstreams, func(c *upstream.Client) bool { return c.Name() == name })
	if i < 0 {
		a.srvMu.Unlock()
		return fmt.Errorf("restart %s: %w", name, ErrNotRunning)
	}
	old := a.upstreams[i]
	c := upstream.New(old.Config(), &uo)
	c.Carry(old)
	// New slices: readers hold the old ones without the lock.
	upstreams := slices.Clone(a.upstreams)
	upstreams[i] = c
	members := slices.Clone(a.members)
	for j, m := range members {
		if m.src == Source(old) {
			nm := *m
			nm.src = c
			members[j] = &nm
		}
	}
	a.upstreams, a.members = upstreams, members
	a.srvMu.Unlock()

	c.Start(a.ctx)
	a.log.Info("server restarted", "server", name)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		old.Close()
	}()
	a.Rebuild()
	return nil
}
