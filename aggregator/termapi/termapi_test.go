package termapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/upstream"
)

// fakeCatalog answers from memory, named so that a test sees which
// catalog a request was shown.
type fakeCatalog struct {
	name  string
	calls []string
}

func (f *fakeCatalog) WaitReady(context.Context) error { return nil }
func (f *fakeCatalog) Catalog() *aggregator.Catalog {
	return &aggregator.Catalog{Problems: []string{"catalog " + f.name}}
}
func (f *fakeCatalog) Servers() []upstream.Status { return []upstream.Status{{Name: f.name}} }
func (f *fakeCatalog) CallTool(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	f.calls = append(f.calls, name+" "+string(args))
	switch name {
	case "missing":
		return nil, fmt.Errorf("tool %q: %w", name, aggregator.ErrUnknown)
	case "broken":
		return nil, errors.New("the upstream said secret-token-123")
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"from ` + f.name + `"}]}`), nil
}

func newTestHandler(t *testing.T) (http.Handler, map[string]*fakeCatalog) {
	t.Helper()
	views := map[string]*fakeCatalog{"": {name: "all"}, "ops": {name: "ops"}}
	h, err := New(&Options{
		View: func(p string) Catalog {
			if c := views[p]; c != nil {
				return c
			}
			return nil
		},
		MaxBody: 1 << 10,
		Redact:  func(s string) string { return strings.ReplaceAll(s, "secret-token-123", "[redacted]") },
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, views
}

// TestTerminalAPI: each route answers from the catalog the request's
// profile is shown, a call gets the tool's raw result or an error that
// names what was wrong (redacted), and what is not a route is a
// JSON-RPC error.
func TestTerminalAPI(t *testing.T) {
	h, views := newTestHandler(t)
	cases := []struct {
		name, method, path, profile, body string
		status                            int
		has                               string
	}{
		{"catalog", "GET", "/mcpx/v1/catalog", "", "", 200, `"catalog all"`},
		{"profile's catalog", "GET", "/mcpx/v1/catalog", "ops", "", 200, `"catalog ops"`},
		{"servers", "GET", "/mcpx/v1/servers", "ops", "", 200, `"ops"`},
		{"call", "POST", "/mcpx/v1/call", "", `{"name":"echo","arguments":{"m":1}}`, 200, `"from all"`},
		{"call in a profile", "POST", "/mcpx/v1/call", "ops", `{"name":"echo"}`, 200, `"from ops"`},
		{"unknown tool", "POST", "/mcpx/v1/call", "", `{"name":"missing"}`, 404, `tool \"missing\": unknown`},
		{"upstream failure", "POST", "/mcpx/v1/call", "", `{"name":"broken"}`, 502, `[redacted]`},
		{"no name", "POST", "/mcpx/v1/call", "", `{"arguments":{}}`, 400, `want {\"name\"`},
		{"not JSON", "POST", "/mcpx/v1/call", "", `name=echo`, 400, `want {\"name\"`},
		{"body over the limit", "POST", "/mcpx/v1/call", "", `{"name":"echo","arguments":{"m":"` + strings.Repeat("x", 2<<10) + `"}}`, 400, "reading the body"},
		{"profile not served", "GET", "/mcpx/v1/catalog", "gone", "", 403, "the profile gone"},
		{"wrong method", "GET", "/mcpx/v1/call", "", "", 404, `"code":-32601`},
		{"no such route", "GET", "/mcpx/v1/nothing", "", "", 404, "not found: GET /mcpx/v1/nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			if c.profile != "" {
				r = r.WithContext(principal.WithProfile(r.Context(), c.profile))
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.status || !strings.Contains(w.Body.String(), c.has) {
				t.Errorf("%s %s: %d %s, want %d holding %s", c.method, c.path, w.Code, w.Body, c.status, c.has)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	if got := views[""].calls; len(got) == 0 || got[0] != `echo {"m":1}` {
		t.Errorf("the whole catalog's calls: %q, want echo with its arguments first", got)
	}
	if got := views["ops"].calls; len(got) != 1 || got[0] != "echo " {
		t.Errorf("the profile's calls: %q, want the one echo, without arguments", got)
	}
}

// TestNewNeedsView: a handler with no way to find a catalog is refused.
func TestNewNeedsView(t *testing.T) {
	if _, err := New(&Options{}); err == nil {
		t.Error("New without View: no error")
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil): no error")
	}
}
