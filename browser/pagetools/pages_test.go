package pagetools_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/internal/testenv"
)

// newPageServer serves the test pages of testdata/webmcp (/shop is
// shop.html, on any host name) and the browser bundles of the real MCP-B
// packages pinned in testdata/node, which must be installed (see
// [testenv.NeedNodePeers]). A missing test page fails the test.
func newPageServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	testenv.NeedNodePeers(tb)
	root := filepath.Join("..", "..", "testdata")
	files := map[string]string{
		"/mcpb/global.js":   "node/node_modules/@mcp-b/global/dist/index.iife.js",
		"/mcpb/polyfill.js": "node/node_modules/@mcp-b/webmcp-polyfill/dist/index.iife.js",
		"/shop":             "webmcp/shop.html",
		"/news":             "webmcp/news.html",
		"/click":            "webmcp/click.html",
	}
	body := map[string][]byte{}
	for route, rel := range files {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			tb.Fatalf("test file %s is missing (the MCP-B bundles come from npm ci --prefix testdata/node): %v", rel, err)
		}
		body[route] = b
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := body[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, ".js") {
			w.Header().Set("Content-Type", "text/javascript")
		} else {
			w.Header().Set("Content-Type", "text/html")
		}
		_, _ = w.Write(b)
	}))
	tb.Cleanup(srv.Close)
	return srv
}
