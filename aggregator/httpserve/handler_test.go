package httpserve_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/aggregator/httpserve"
	"github.com/mcpx/mcpx/config"
)

// emptyCatalog is an aggregator with no servers, running until the test
// ends.
func emptyCatalog(t *testing.T) *aggregator.Aggregator {
	t.Helper()
	cfg, err := config.Parse("mcpx.json", []byte(`{"servers": {}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	agg := aggregator.New(cfg, nil)
	agg.Start(t.Context())
	t.Cleanup(func() { agg.Close() })
	return agg
}

// TestNewHandler: the exported handler guards as ListenAndServe does for
// the host it is told it is bound to, and Close ends its sessions.
func TestNewHandler(t *testing.T) {
	agg := emptyCatalog(t)
	if _, err := httpserve.NewHandler(t.Context(), "10.0.0.1", agg, nil); !errors.Is(err, httpserve.ErrTokenRequired) {
		t.Errorf("a non-loopback host without a credential: %v, want ErrTokenRequired", err)
	}
	h, err := httpserve.NewHandler(t.Context(), "10.0.0.1", agg, &httpserve.Options{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(token, host string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(initialize))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("", "10.0.0.1"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d, want 401", resp.StatusCode)
	}
	resp := post("s3cret", "10.0.0.1")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
	h.Close()
	if resp := post("s3cret", "10.0.0.1"); resp.StatusCode == http.StatusOK {
		t.Errorf("a session started after Close: HTTP %d", resp.StatusCode)
	}

	// Bound to loopback, no credential is needed and a Host that is not
	// a loopback name (a DNS rebinding page) is refused.
	lh, err := httpserve.NewHandler(t.Context(), "127.0.0.1", agg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lh.Close()
	lsrv := httptest.NewServer(lh)
	defer lsrv.Close()
	srv.URL = lsrv.URL
	if resp := post("", "rebind.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("loopback, Host rebind.example: HTTP %d, want 403", resp.StatusCode)
	}
	if resp := post("", "localhost"); resp.StatusCode != http.StatusOK {
		t.Errorf("loopback, Host localhost: HTTP %d, want 200", resp.StatusCode)
	}
}
