package pagetools_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// mcpbBundles are the browser bundles of the real MCP-B packages, pinned
// in testdata/node (npm ci --prefix testdata/node).
var mcpbBundles = map[string]string{
	"/mcpb/global.js":   "@mcp-b/global/dist/index.iife.js",
	"/mcpb/polyfill.js": "@mcp-b/webmcp-polyfill/dist/index.iife.js",
}

// shopPage registers its tools through @mcp-b/global. ?variant=b adds a
// tool, so that two tabs of the shop offer different sets. Every answer
// names the tab's query string, so that a test sees which tab ran it.
const shopPage = `<!doctype html>
<html><head><title>Shop</title><script src="/mcpb/global.js"></script></head><body>
<h1>Shop</h1>
<script>
const mc = document.modelContext;
const where = () => location.search || '(no query)';
const variant = new URLSearchParams(location.search).get('variant') || 'a';
mc.registerTool({
  name: 'add_to_cart', description: 'Add a product to the cart',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
  async execute(args) { return { content: [{ type: 'text', text: 'added ' + args.sku + ' in ' + where() }] }; },
});
mc.registerTool({ name: 'explode', description: 'Always throws', async execute() { throw new Error('out of stock: kaboom'); } });
mc.registerTool({
  name: 'refuse', description: 'Answers with isError',
  async execute() { return { content: [{ type: 'text', text: 'the cart is locked' }], isError: true }; },
});
mc.registerTool({ name: 'hang', description: 'Never answers', execute() { return new Promise(() => {}); } });
if (variant === 'b') {
  mc.registerTool({ name: 'compare', description: 'Compare two products',
    async execute() { return { content: [{ type: 'text', text: 'compared in ' + where() }] }; } });
}
let coupon = null;
window.addCoupon = () => {
  coupon = new AbortController();
  return mc.registerTool({ name: 'apply_coupon', description: 'Apply a coupon',
    async execute() { return { content: [{ type: 'text', text: 'coupon applied' }] }; } }, { signal: coupon.signal });
};
window.removeCoupon = () => coupon.abort();
</script></body></html>`

// newsPage registers through the bare polyfill and answers a plain
// object, not a CallToolResult.
const newsPage = `<!doctype html>
<html><head><title>News</title><script src="/mcpb/polyfill.js"></script></head><body>
<script>
document.modelContext.registerTool({
  name: 'headline', description: 'Today\'s headline',
  inputSchema: { type: 'object', properties: {} },
  execute: async () => ({ headline: 'Go 2 released', at: location.host }),
});
</script></body></html>`

// clickPage is a site whose tools would shadow browser tools if it were
// served at a host named "browser".
const clickPage = `<!doctype html>
<html><head><title>Clicker</title><script src="/mcpb/global.js"></script></head><body>
<script>
document.modelContext.registerTool({ name: 'click', description: 'A page tool named click',
  async execute() { return { content: [{ type: 'text', text: 'page click' }] }; } });
document.modelContext.registerTool({ name: 'other', description: 'Another page tool',
  async execute() { return { content: [{ type: 'text', text: 'page other' }] }; } });
</script></body></html>`

// newPageServer serves the test pages (by path, on any host name) and the
// MCP-B bundles from testdata/node. A missing bundle fails the test.
func newPageServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	files := map[string][]byte{}
	for route, rel := range mcpbBundles {
		p := filepath.Join("..", "..", "testdata", "node", "node_modules", rel)
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatalf("the MCP-B bundle %s is missing (run npm ci --prefix testdata/node): %v", rel, err)
		}
		files[route] = b
	}
	pages := map[string]string{"/shop": shopPage, "/news": newsPage, "/click": clickPage}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := files[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(b)
			return
		}
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	tb.Cleanup(srv.Close)
	return srv
}
