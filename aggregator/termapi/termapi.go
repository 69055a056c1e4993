// Package termapi serves mcpx's terminal API: what `mcpx list`, `mcpx
// call` and `mcpx servers --server-url` ask a running `serve --http`
// under /mcpx/v1/, so that scripts reuse its warm upstreams.
//
//	GET  /mcpx/v1/catalog  the catalog (Tools, Resources, ResourceTemplates, Prompts, Collisions, Problems)
//	GET  /mcpx/v1/servers  every upstream's status
//	POST /mcpx/v1/call     {"name": ..., "arguments": {...}} -> the raw CallToolResult
//
// It owns the API's routes and their JSON, and reads the catalog through
// [Catalog], which *aggregator.Aggregator satisfies; it shows the whole
// catalog by exposed name, whatever expose is, as those commands do
// locally. It imports the aggregator and upstream packages for their
// types only, and no transport: package httpserve mounts it behind the
// guards of /mcp, which put the request's principal in its context.
package termapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream"
)

// Catalog is what the API reads of the catalog a request is shown: the
// whole one, or a profile's view. Its methods are called concurrently.
type Catalog interface {
	// WaitReady returns once every upstream has had its first connect
	// and the catalog shows them, or ctx is done.
	WaitReady(ctx context.Context) error
	// Catalog is the catalog now.
	Catalog() *aggregator.Catalog
	// Servers are the statuses of the upstreams the catalog shows.
	Servers() []upstream.Status
	// CallTool calls a tool by exposed name through the ordinary call
	// path, which gates, audits and traces it; an unknown name is
	// aggregator.ErrUnknown, bad arguments aggregator.ErrInvalidParams.
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

// Options configure [New].
type Options struct {
	// View returns the catalog shown to a request limited to profile
	// ("": the whole catalog), or nil when there is no such profile.
	// Required.
	View func(profile string) Catalog
	// MaxBody bounds a call's body when the handler is served without
	// httpserve's body gate, which bounds every body itself; 0 means no
	// limit.
	MaxBody int64
	// Redact removes secrets from an error the API answers with; nil
	// keeps the text.
	Redact func(string) string
}

// New returns the handler of /mcpx/v1/.
func New(o *Options) (http.Handler, error) {
	if o == nil || o.View == nil {
		return nil, errors.New("termapi: Options.View is required")
	}
	h := &handler{o: *o}
	if h.o.Redact == nil {
		h.o.Redact = func(s string) string { return s }
	}
	return h, nil
}

type handler struct{ o Options }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	profile := principal.ProfileOf(r.Context())
	c := h.o.View(profile)
	if c == nil {
		// A key limited to a profile is never shown more than it.
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "the profile " + profile + " of this key is not served here"})
		return
	}
	switch {
	case r.URL.Path == "/mcpx/v1/catalog" && r.Method == http.MethodGet:
		_ = c.WaitReady(r.Context())
		writeJSON(w, http.StatusOK, c.Catalog())
	case r.URL.Path == "/mcpx/v1/servers" && r.Method == http.MethodGet:
		_ = c.WaitReady(r.Context())
		writeJSON(w, http.StatusOK, c.Servers())
	case r.URL.Path == "/mcpx/v1/call" && r.Method == http.MethodPost:
		h.call(w, r, c)
	default:
		// A JSON-RPC error body, as the transport's own errors are.
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": jsonrpc.CodeMethodNotFound, "message": "not found: " + r.Method + " " + r.URL.Path}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write(b)
	}
}

// call answers POST /mcpx/v1/call with the tool's raw result.
func (h *handler) call(w http.ResponseWriter, r *http.Request, c Catalog) {
	data, err := h.body(w, r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "reading the body: " + err.Error()})
		return
	}
	// The arguments alias the body, not a copy of them: the body is all
	// this call holds (httpserve bounds it and counts it while the call
	// runs).
	var req struct{ Name string }
	args, _ := rawjson.Get(data, "arguments")
	if json.Unmarshal(data, &req) != nil || req.Name == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want {"name": ..., "arguments": {...}}`})
		return
	}
	res, err := c.CallTool(r.Context(), req.Name, args)
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, aggregator.ErrUnknown) || errors.Is(err, aggregator.ErrInvalidParams) {
			status = http.StatusNotFound
		}
		writeJSON(w, status, map[string]string{"error": h.o.Redact(err.Error())})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(res)
}

// body returns the body of a call: as package httpserve read it (its
// body gate bounds every body and gives it whole, by Bytes), or read
// here within MaxBody when the handler is served without it.
func (h *handler) body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(interface{ Bytes() []byte }); ok {
		return b.Bytes(), nil
	}
	body := io.Reader(r.Body)
	if h.o.MaxBody > 0 {
		body = http.MaxBytesReader(w, r.Body, h.o.MaxBody)
	}
	return io.ReadAll(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
