package aggregator

import (
	"context"
	"slices"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// Servers marked perSession run once per served session, not once for
// all: each session (stdio, or one HTTP client) gets its own Aggregator
// whose sources are its own instances of those servers plus the shared
// catalog's sources. The shared upstreams' notifications and requests
// reach the session through the shared Aggregator's listeners; its own
// servers' go only to it. Its instances stop when the session ends, or
// idles out (http.sessionTimeout).

// runs reports whether this Aggregator starts server s: a shared catalog
// that serves clients leaves perSession servers to each session's own.
func (a *Aggregator) runs(s config.Server) bool {
	return !s.PerSession || a.parent != nil || !a.opts.Serving
}

// sessionCatalog returns a new Aggregator for one session's own servers
// and its profile view ("": none of its own), registered with a, or nil
// when a has neither to give (or is one itself).
func (a *Aggregator) sessionCatalog(view string) *Aggregator {
	if a.parent != nil || !a.opts.Serving {
		return nil
	}
	var own []config.Server
	for _, s := range a.cfg.Servers {
		if s.PerSession {
			own = append(own, s)
		}
	}
	if len(own) == 0 && view == "" {
		return nil
	}
	return a.childCatalog(own, view)
}

// childCatalog returns a new Aggregator over a's sources and own, shown
// through profile view, registered with a so that its rebuilds follow
// a's.
func (a *Aggregator) childCatalog(own []config.Server, view string) *Aggregator {
	cfg := *a.cfg
	cfg.Servers = own
	cfg.Browser = nil
	opts := a.opts
	// The session's calls are recorded by the shared recorder, whose
	// gauges read the shared upstreams: a recorder of its own would
	// register them again.
	opts.TracerProvider, opts.MeterProvider = nil, nil
	child := New(&cfg, &opts)
	child.tel = a.tel
	child.parent = a
	child.view = view
	child.callers = a.callers
	child.search = a.search
	child.engine = a.engine
	a.children.Store(child, struct{}{})
	return child
}

// sessionClients are the upstreams a session's settings (log level, roots
// changes) go to: its own and the shared ones.
func (a *Aggregator) sessionClients() []*upstream.Client {
	own := a.clients()
	if a.parent == nil {
		return own
	}
	return append(slices.Clone(a.parent.clients()), own...)
}

// StartView starts a catalog shown through profile view, over a's
// servers and none of its own (per-session servers belong to sessions),
// that follows a's reloads and is closed when ctx ends; it returns that
// catalog's modern core. Package httpserve serves the modern requests of
// /mcp/NAME from it: a modern request belongs to no session.
func (a *Aggregator) StartView(ctx context.Context, view string) func() (*core.Server, error) {
	return a.startView(ctx, view).Modern
}

// startView starts a catalog shown through profile view over a's
// servers, following a's reloads, closed when ctx ends.
func (a *Aggregator) startView(ctx context.Context, view string) *Aggregator {
	c := a.childCatalog(nil, view)
	c.Start(ctx)
	context.AfterFunc(ctx, func() {
		a.children.Delete(c)
		c.Close()
	})
	return c
}
