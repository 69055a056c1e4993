package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/internal/testenv"
)

// TestPageToolsEndToEnd serves `mcpx serve --stdio` with the browser on
// headless Chromium. The model opens a site at a host named "browser"
// whose page registers (through @mcp-b/global) the tools "click" and
// "other": browser_other becomes a page tool, announced with
// list_changed, callable directly and through proxy; browser_click stays
// the browser's own, the page's is reported as a collision. A one-shot
// `mcpx list tools` and `mcpx servers` (allTabs, allowed host) show the
// page tools under the page source with their domain and tab.
func TestPageToolsEndToEnd(t *testing.T) {
	pages := servePages(t)
	u, _ := url.Parse(pages.URL)
	site := "http://browser:" + u.Port()
	relay := browsertest.NewRelay(&browsertest.RelayOptions{Local: true})
	defer relay.Close()
	chrome := browsertest.StartChromium(t, relay.ExtensionURL(), "",
		"--host-resolver-rules=MAP browser 127.0.0.1",
		"--unsafely-treat-insecure-origin-as-secure="+site) // WebMCP wants a secure context
	defer chrome.Close()

	cfg := writeConfig(t, map[string]any{"browser": map[string]any{
		"url": relay.MCPURL(), "pageTools": map[string]any{"interval": "250ms"}}})
	c := startServe(t, cfg)
	c.initialize()
	call := func(name string, args any) (string, bool) {
		t.Helper()
		raw, e := c.request("tools/call", map[string]any{"name": name, "arguments": args})
		if e != nil {
			t.Fatalf("%s: JSON-RPC error %s", name, e.Message)
		}
		var r struct {
			Content []struct{ Text string }
			IsError bool
		}
		json.Unmarshal(raw, &r)
		var b strings.Builder
		for _, c := range r.Content {
			b.WriteString(c.Text)
		}
		return b.String(), r.IsError
	}
	type tool struct{ Name, Description string }
	list := func() map[string][]tool {
		t.Helper()
		raw, e := c.request("tools/list", map[string]any{})
		if e != nil {
			t.Fatalf("tools/list: %s", e.Message)
		}
		var r struct{ Tools []tool }
		json.Unmarshal(raw, &r)
		out := map[string][]tool{}
		for _, tl := range r.Tools {
			out[tl.Name] = append(out[tl.Name], tl)
		}
		return out
	}

	if tools := list(); len(tools["browser_other"]) != 0 {
		t.Fatalf("a page tool before any page was opened: %v", tools)
	} // a client that fetched the list is told when it changes
	before := c.countNotes("notifications/tools/list_changed")
	if text, isErr := call("browser_tabs", map[string]any{"action": "new", "url": site + "/click"}); isErr {
		t.Fatalf("open the page: %s\nchromium:\n%s", text, chrome.Output())
	}
	deadline := time.Now().Add(20 * time.Second)
	for c.countNotes("notifications/tools/list_changed") == before {
		if time.Now().After(deadline) || !c.waitNotification("notifications/tools/list_changed", time.Until(deadline)) {
			t.Fatalf("no list_changed after the page registered its tools\nchromium:\n%s", chrome.Output())
		}
	}
	// The page registered both tools before mcpx first looked: the one
	// list_changed brought both changes.
	tools := list()
	if len(tools["browser_other"]) != 1 {
		t.Fatalf("browser_other not listed after the list_changed: %v", tools)
	}
	if d := tools["browser_other"][0].Description; !strings.Contains(d, "Page tool of browser, tab 1") || !strings.Contains(d, "session") {
		t.Errorf("browser_other description %q; want its site, tab and session note", d)
	}
	if got := tools["browser_click"]; len(got) != 1 || strings.Contains(got[0].Description, "page tool") {
		t.Errorf("browser_click = %+v; want only the browser's own", got)
	}
	if text, isErr := call("browser_other", map[string]any{}); isErr || text != "page other" {
		t.Errorf("browser_other = %q (isError %v); want the page's answer", text, isErr)
	}
	if text, _ := call("browser_click", map[string]any{"selector": "body"}); strings.Contains(text, "page click") {
		t.Errorf("browser_click reached the page: %q", text)
	}
	raw, e := c.request("tools/call", map[string]any{"name": "proxy",
		"arguments": map[string]any{"action": "list", "type": "tool", "filter_server": "page"}})
	if e != nil || !strings.Contains(string(raw), `browser_other`) || strings.Contains(string(raw), `browser_click`) ||
		!strings.Contains(string(raw), `\"totalCount\":1`) && !strings.Contains(string(raw), `"totalCount":1`) {
		t.Errorf("proxy list of server page: %s; want browser_other alone", raw)
	}

	// One-shot commands in another process: they drove no tab, so they
	// look into all tabs, for the one allowed host.
	oneShot := writeConfig(t, map[string]any{"browser": map[string]any{
		"url": relay.MCPURL(), "pageTools": map[string]any{"allTabs": true, "allow": []string{"browser"}}}})
	out, errOut, code := runCLI(t, "", "list", "tools", "--server", "page", "--config", oneShot)
	if code != 0 || !strings.Contains(out, "browser_other") || !strings.Contains(out, "page") ||
		!strings.Contains(out, "Page tool of browser, tab 1") || strings.Contains(out, "browser_click") {
		t.Errorf("mcpx list tools --server page (exit %d):\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "", "servers", "--json", "--config", oneShot)
	var st struct {
		Pages *struct {
			Name  string
			Tools int
			Sites []struct {
				Domain string
				Tabs   []int
			}
			Collisions []string
		}
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("mcpx servers --json (exit %d, %v):\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	if p := st.Pages; p == nil || p.Name != "page" || p.Tools != 1 || len(p.Sites) != 1 || p.Sites[0].Domain != "browser" ||
		fmt.Sprint(p.Sites[0].Tabs) != "[1]" || len(p.Collisions) != 1 || !strings.Contains(p.Collisions[0], `"browser_click"`) {
		t.Errorf("mcpx servers --json pages = %+v; want page: 1 tool of browser in tab 1, browser_click a collision", p)
	}
}

// servePages serves testdata/webmcp's pages and the MCP-B bundles pinned
// in testdata/node, which must be installed (see [testenv.NeedNodePeers]).
func servePages(t *testing.T) *httptest.Server {
	t.Helper()
	testenv.NeedNodePeers(t)
	files := map[string]string{
		"/mcpb/global.js":   "node/node_modules/@mcp-b/global/dist/index.iife.js",
		"/mcpb/polyfill.js": "node/node_modules/@mcp-b/webmcp-polyfill/dist/index.iife.js",
		"/click":            "webmcp/click.html",
		"/shop":             "webmcp/shop.html",
	}
	body := map[string][]byte{}
	for route, rel := range files {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", rel))
		if err != nil {
			t.Fatalf("test file %s is missing (the MCP-B bundles come from npm ci --prefix testdata/node): %v", rel, err)
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
	t.Cleanup(srv.Close)
	return srv
}
