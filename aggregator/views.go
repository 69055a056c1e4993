package aggregator

import (
	"errors"
	"slices"
	"sync"

	"github.com/mcpx/mcpx/trust"
	"github.com/mcpx/mcpx/upstream"
)

// Servers returns the status of the upstreams the catalog shows, in
// config order: every one, or those of the profile a view shows.
func (a *Aggregator) Servers() []upstream.Status { return a.shownUpstreams() }

// ProfileView returns the catalog shown through profile, over the shared
// servers, as the terminal API serves a client limited to it: started on
// first use and closed with a. Nil when a is not started or the config
// has no such profile.
func (a *Aggregator) ProfileView(profile string) *Aggregator {
	if a.parent != nil {
		return nil
	}
	return a.apiViews.get(a, profile)
}

// ErrNoPins is returned by Approve when nothing is pinned.
var ErrNoPins = errors.New("nothing is pinned: trust is off, or there is no state directory to keep pins in")

// Approve records what review r saw as the approved definitions of its
// server (trust.Store.Approve) and builds the catalog again, so that
// what was withheld is listed and clients are told with list_changed.
// An approval made by another process (mcpx trust) reaches a running
// serve through the pin file it watches, which calls Rebuild the same
// way.
func (a *Aggregator) Approve(r *trust.Review) error {
	st := a.root().opts.Trust
	if st == nil {
		return ErrNoPins
	}
	if err := st.Approve(r); err != nil {
		return err
	}
	a.root().Rebuild()
	return nil
}

// shownUpstreams are the upstreams' statuses, of the servers the
// profile a view shows (the terminal API of a profile's view).
func (a *Aggregator) shownUpstreams() []upstream.Status {
	all := a.root().Upstreams()
	p := a.profile()
	if p == nil {
		return all
	}
	return slices.DeleteFunc(all, func(s upstream.Status) bool { return !p.Includes(s.Name) })
}

// apiViews are the catalogs the terminal API and the dashboard serve a
// profile from (ProfileView),
// one per profile, started on first use and closed with the aggregator.
type apiViews struct {
	mu sync.Mutex
	by map[string]*Aggregator
}

// get returns a's view through profile, started with a's context; nil
// when a is not started or the config has no such profile.
func (v *apiViews) get(a *Aggregator, profile string) *Aggregator {
	if ok, _ := a.HasProfile(profile); !ok || a.ctx == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.by[profile]; c != nil {
		return c
	}
	c := a.startView(a.ctx, profile)
	if v.by == nil {
		v.by = map[string]*Aggregator{}
	}
	v.by[profile] = c
	return c
}
