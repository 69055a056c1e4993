package aggregator

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream"
)

// The terminal API of `serve --http` under /mcpx/v1/, behind the same
// guards as /mcp: what `mcpx list`, `call` and `servers --server-url` ask
// a running mcpx, so that scripts reuse its warm upstreams. It shows the
// whole catalog by exposed name, whatever expose is, as those commands
// do locally.
//
//	GET  /mcpx/v1/catalog  the catalog (Tools, Resources, ResourceTemplates, Prompts, Collisions, Problems)
//	GET  /mcpx/v1/servers  every upstream's status
//	POST /mcpx/v1/call     {"name": ..., "arguments": {...}} -> the raw CallToolResult

// APIHandler serves the terminal API; package httpserve mounts it at
// /mcpx/v1/ behind its guards.
func (a *Aggregator) APIHandler() http.Handler { return http.HandlerFunc(a.api) }

func (a *Aggregator) api(w http.ResponseWriter, r *http.Request) {
	if p := principal.ProfileOf(r.Context()); p != "" && a.parent == nil {
		// A client limited to a profile (a named API key's) is served
		// the profile's catalog, as /mcp/NAME is.
		if v := a.apiViews.get(a, p); v != nil {
			v.api(w, r)
			return
		}
	}
	writeJSON := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.URL.Path == "/mcpx/v1/catalog" && r.Method == http.MethodGet:
		a.waitReady(r.Context())
		writeJSON(http.StatusOK, a.Catalog())
	case r.URL.Path == "/mcpx/v1/servers" && r.Method == http.MethodGet:
		a.waitReady(r.Context())
		writeJSON(http.StatusOK, a.shownUpstreams())
	case r.URL.Path == "/mcpx/v1/call" && r.Method == http.MethodPost:
		data, err := a.apiBody(w, r)
		if err != nil {
			writeJSON(http.StatusBadRequest, map[string]string{"error": "reading the body: " + err.Error()})
			return
		}
		// The arguments alias the body, not a copy of them: the body is
		// all this call holds (httpserve bounds it and counts it while
		// the call runs).
		var req struct{ Name string }
		args, _ := rawjson.Get(data, "arguments")
		if json.Unmarshal(data, &req) != nil || req.Name == "" {
			writeJSON(http.StatusBadRequest, map[string]string{"error": "want {\"name\": ..., \"arguments\": {...}}"})
			return
		}
		res, err := a.CallTool(r.Context(), req.Name, args)
		if err != nil {
			status := http.StatusBadGateway
			if errors.Is(err, ErrUnknown) || errors.Is(err, ErrInvalidParams) {
				status = http.StatusNotFound
			}
			writeJSON(status, map[string]string{"error": a.opts.Redact(err.Error())})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(res)
	default:
		// A JSON-RPC error body, as the transport's own errors are.
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": jsonrpc.CodeMethodNotFound, "message": "not found: " + r.Method + " " + r.URL.Path}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write(b)
	}
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

// apiViews are the catalogs the terminal API serves a profile from,
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

// apiBody returns the body of an API request: as package httpserve read
// it (its body gate bounds every body and gives it whole, by Bytes), or
// read here within maxMessageBytes when the handler is served without it.
func (a *Aggregator) apiBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(interface{ Bytes() []byte }); ok {
		return b.Bytes(), nil
	}
	body := io.Reader(r.Body)
	if max := a.cfg.MaxMessageBytes; max > 0 {
		body = http.MaxBytesReader(w, r.Body, max)
	}
	return io.ReadAll(body)
}
