package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx/mcpx/internal/testenv"
)

// changingServer is the Go SDK's streamable HTTP server making changes
// while mcpx runs (testenv.AddChangeTools, on the resource
// watchedURI(name)). It speaks both eras, or only 2026-07-28 when
// modernOnly. It records the Mcp-Method of every request.
type changingServer struct {
	url  string
	mu   sync.Mutex
	seen []string
}

func watchedURI(name string) string { return "test://" + name + "/watched" }

func startChangingServer(t *testing.T, name string, modernOnly bool) *changingServer {
	t.Helper()
	opts := testenv.SubscribeOptions()
	if modernOnly {
		opts.SupportedProtocolVersions = []string{"2026-07-28"}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, opts)
	testenv.AddChangeTools(srv, watchedURI(name))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	s := &changingServer{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Get("Mcp-Method"))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

// methods is the Mcp-Method header of the requests so far, each once,
// sorted: what a modern client sends; "" for the rest (initialize and
// the legacy era's).
func (s *changingServer) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(s.seen)))
}

// TestUpstreamChanges: the Go SDK as a dual-era (under protocol modern)
// and as a modern-only upstream, both spoken to in the modern era,
// change while mcpx runs: a
// tool added and a resource updated on each reach a legacy client of
// serve --stdio (list_changed, resources/updated after
// resources/subscribe) and a modern client of serve --http (on its
// subscriptions/listen streams).
func TestUpstreamChanges(t *testing.T) {
	servers := map[string]*changingServer{
		"dual":   startChangingServer(t, "dual", false),
		"modern": startChangingServer(t, "modern", true),
	}
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"dual":   map[string]any{"url": servers["dual"].url, "protocol": "modern"},
		"modern": map[string]any{"url": servers["modern"].url},
	}})

	t.Run("legacy client", func(t *testing.T) {
		c := startServe(t, cfg)
		c.initialize()
		for _, name := range []string{"dual", "modern"} {
			before := c.countNotes("notifications/tools/list_changed")
			var names []string
			testenv.Eventually(t, 20*time.Second, func() bool {
				c.request("tools/call", map[string]any{"name": name + "_grow", "arguments": map[string]any{}})
				names = c.listToolNames()
				return c.countNotes("notifications/tools/list_changed") > before && slices.ContainsFunc(names, isGrown(name))
			}, "%s: no list_changed followed by a grown tool (last list %v)", name, &names)

			uri := watchedURI(name)
			if _, e := c.request("resources/subscribe", map[string]any{"uri": uri}); e != nil {
				t.Fatalf("resources/subscribe %s: %s", uri, e.Message)
			}
			testenv.Eventually(t, 20*time.Second, func() bool {
				c.request("tools/call", map[string]any{"name": name + "_touch", "arguments": map[string]any{}})
				return c.hasUpdate(uri)
			}, "no resources/updated for %s", uri)
		}
	})

	t.Run("modern client", func(t *testing.T) {
		srv := startHTTP(t, cfg, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var changed atomic.Int32
		var mu sync.Mutex
		var updated []string
		client := mcp.NewClient(&mcp.Implementation{Name: "modern-test", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				mu.Lock()
				updated = append(updated, req.Params.URI)
				mu.Unlock()
			},
		})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatalf("%v; stderr:\n%s", err, srv.stderr.String())
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("negotiated %q, want 2026-07-28", v)
		}
		for _, name := range []string{"dual", "modern"} {
			before := changed.Load()
			var names []string
			testenv.Eventually(t, 20*time.Second, func() bool {
				cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_grow", Arguments: map[string]any{}})
				names = names[:0]
				for tool, err := range cs.Tools(ctx, nil) {
					if err != nil {
						return false
					}
					names = append(names, tool.Name)
				}
				return changed.Load() > before && slices.ContainsFunc(names, isGrown(name))
			}, "%s: no tools/list_changed on the listen stream followed by a grown tool (last list %v); stderr:\n%s", name, &names, srv.stderr)

			uri := watchedURI(name)
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatalf("subscribe %s: %v", uri, err)
			}
			testenv.Eventually(t, 20*time.Second, func() bool {
				cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_touch", Arguments: map[string]any{}})
				mu.Lock()
				defer mu.Unlock()
				return slices.Contains(updated, uri)
			}, "no resources/updated for %s on the listen stream", uri)
		}
	})

	for name, s := range servers {
		seen := s.methods()
		if !slices.Contains(seen, "subscriptions/listen") || slices.Contains(seen, "") {
			t.Errorf("%s: requests of methods %q; want mcpx modern (subscriptions/listen, no request without Mcp-Method)", name, seen)
		}
	}
}

// isGrown matches a tool grow added on server name.
func isGrown(name string) func(string) bool {
	return func(tool string) bool { return strings.HasPrefix(tool, name+"_grown-") }
}

// hasUpdate reports whether a resources/updated for uri has arrived.
func (c *rawClient) hasUpdate(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, raw := range c.notes {
		var m struct {
			Method string `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Method == "notifications/resources/updated" && m.Params.URI == uri {
			return true
		}
	}
	return false
}
