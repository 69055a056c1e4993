package httpserve

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/jsonrpc"
)

// profileOf is the profile a request's path names: NAME of /mcp/NAME or
// /sse/NAME; "" for /mcp and /sse, which show the whole catalog.
func profileOf(r *http.Request) string {
	for _, prefix := range []string{"/mcp/", "/sse/"} {
		if name, ok := strings.CutPrefix(r.URL.Path, prefix); ok {
			return name
		}
	}
	return ""
}

// profiled answers 404, naming the profiles there are, for a path whose
// profile the config does not define.
func (h *httpHandler) profiled(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, msg := h.c.HasProfile(profileOf(r)); !ok {
			httpError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// modernCore is the session core that serves the modern requests of a
// path: the whole catalog's on /mcp, profile view's own on /mcp/NAME.
func (h *httpHandler) modernCore(view string) (*core.Server, error) {
	if view == "" {
		return h.c.Modern()
	}
	return h.views.get(h.ctx, h.c, view)()
}

// profileViews holds, by profile, the catalog the modern requests on
// /mcp/NAME are served from. A modern request belongs to no session, so
// each profile has one catalog (and with it one core) for as long as mcpx
// serves, made at the first such request: over the shared servers, with
// no per-session ones, following the config's reloads as a session's
// does.
type profileViews struct {
	mu sync.Mutex
	by map[string]func() (*core.Server, error)
}

// get returns the getter of profile view's modern core, its catalog
// started on first use (Catalog.StartView) and closed when ctx ends.
func (p *profileViews) get(ctx context.Context, c Catalog, view string) func() (*core.Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.by[view]; m != nil {
		return m
	}
	m := c.StartView(ctx, view)
	if p.by == nil {
		p.by = map[string]func() (*core.Server, error){}
	}
	p.by[view] = m
	return m
}
