package main

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser/browsertest"
)

// TestPageToolsCachePerTool serves `mcpx serve --stdio` with the browser
// on headless Chromium. The model opens two pages of one site: the
// shop's variant b, which registers "compare" besides the shop's tools,
// and the plain shop, which does not. The variant's tab closes while the
// plain one stays open: "compare" stays listed, as a tool of the page
// that registered it, and a call opens that page again and answers from
// it. (The cache was kept per site: the plain page's tools replaced the
// variant's, and "compare" went with its tab.)
func TestPageToolsCachePerTool(t *testing.T) {
	pages := servePages(t)
	u, _ := url.Parse(pages.URL)
	site := "http://shop.localhost:" + u.Port() // *.localhost: loopback, and a secure context as WebMCP wants
	relay := browsertest.NewRelay(&browsertest.RelayOptions{Local: true})
	defer relay.Close()
	chrome := browsertest.StartChromium(t, relay.ExtensionURL(), "")
	defer chrome.Close()
	cfg := writeConfig(t, map[string]any{"browser": map[string]any{
		"url": relay.MCPURL(), "pageTools": map[string]any{"interval": "250ms"}}})
	c := startServe(t, cfg)
	c.initialize()
	p := pageClient{t: t, c: c, chrome: chrome}

	p.call("browser_tabs", map[string]any{"action": "new", "url": site + "/shop?variant=b"})
	p.waitTools("the variant's tools", func(l map[string]pageListed) bool { return l["shop_localhost_compare"].Name != "" })
	p.call("browser_tabs", map[string]any{"action": "new", "url": site + "/shop"})
	p.waitTools("both pages' tools, by tab", func(l map[string]pageListed) bool {
		return l["shop_localhost_tab1_compare"].Name != "" && l["shop_localhost_tab2_add_to_cart"].Name != ""
	})

	p.call("browser_tabs", map[string]any{"action": "close", "index": p.tabIndex("variant=b")})
	l := p.waitTools("one open page again", func(l map[string]pageListed) bool { return l["shop_localhost_add_to_cart"].Name != "" })
	compare, ok := l["shop_localhost_compare"]
	if m := compare.Meta["mcpx/page"]; !ok || !m.Cached || !strings.Contains(compare.Description, "no longer open") {
		t.Fatalf("after the variant's tab closed: shop_localhost_compare = %+v; want it listed from its closed page", compare)
	}
	if m := l["shop_localhost_add_to_cart"].Meta["mcpx/page"]; m.Cached || m.Tab != 2 {
		t.Errorf("add_to_cart _meta %+v; want the open page's (tab 2)", m)
	}
	if text, isErr := p.call("shop_localhost_compare", map[string]any{}); isErr || text != "compared in ?variant=b" {
		t.Errorf("shop_localhost_compare = %q (isError %v); want the answer of the variant's page, opened again", text, isErr)
	}
	tabs, _ := p.call("browser_tabs", map[string]any{"action": "list"})
	if n := strings.Count(tabs, "variant=b"); n != 1 {
		t.Errorf("%d tabs of the variant after the call; want the one opened again:\n%s", n, tabs)
	}
}

// pageListed is a tool of tools/list with the page tools' _meta.
type pageListed struct {
	Name        string
	Description string
	Meta        map[string]struct {
		Tab    int  `json:"tab"`
		Cached bool `json:"cached"`
	} `json:"_meta"`
}

// pageClient drives a serve --stdio with page tools.
type pageClient struct {
	t      *testing.T
	c      *rawClient
	chrome *browsertest.Chromium
}

// call calls a tool and returns its text; a JSON-RPC error fails the test.
func (p pageClient) call(name string, args any) (string, bool) {
	p.t.Helper()
	raw, e := p.c.request("tools/call", map[string]any{"name": name, "arguments": args})
	if e != nil {
		p.t.Fatalf("%s: JSON-RPC error %s", name, e.Message)
	}
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	_ = json.Unmarshal(raw, &r)
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	if r.IsError && strings.HasPrefix(name, "browser_") {
		p.t.Fatalf("%s %v: %s\nchromium:\n%s", name, args, b.String(), p.chrome.Output())
	}
	return b.String(), r.IsError
}

func (p pageClient) tools() map[string]pageListed {
	p.t.Helper()
	raw, e := p.c.request("tools/list", map[string]any{})
	if e != nil {
		p.t.Fatalf("tools/list: %s", e.Message)
	}
	var r struct{ Tools []pageListed }
	_ = json.Unmarshal(raw, &r)
	out := map[string]pageListed{}
	for _, tl := range r.Tools {
		out[tl.Name] = tl
	}
	return out
}

// waitTools lists the tools after each list_changed until ok holds.
func (p pageClient) waitTools(what string, ok func(map[string]pageListed) bool) map[string]pageListed {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		seen := p.c.countNotes("notifications/tools/list_changed")
		l := p.tools()
		if ok(l) {
			return l
		}
		for p.c.countNotes("notifications/tools/list_changed") == seen {
			select {
			case line := <-p.c.lines:
				p.c.keepNote(line)
			case <-time.After(time.Until(deadline)):
				var names []string
				for n := range l {
					names = append(names, n)
				}
				p.t.Fatalf("waiting for %s; tools: %v\nmcpx stderr:\n%s", what, names, p.c.stderr.String())
			}
		}
	}
}

// tabIndex is the index of the one tab whose URL contains s, from
// browser_tabs list.
func (p pageClient) tabIndex(s string) int {
	p.t.Helper()
	list, _ := p.call("browser_tabs", map[string]any{"action": "list"})
	for _, line := range strings.Split(list, "\n") {
		if m := regexp.MustCompile(`^(\d+)\. `).FindStringSubmatch(line); m != nil && strings.Contains(line, s) {
			i, _ := strconv.Atoi(m[1])
			return i
		}
	}
	p.t.Fatalf("no tab shows %s:\n%s", s, list)
	return -1
}

// keepNote keeps line when it is a notification, as request does.
func (c *rawClient) keepNote(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) == nil && m.Method != "" && len(m.ID) == 0 {
		c.mu.Lock()
		c.notes = append(c.notes, line)
		c.mu.Unlock()
	}
}
