package pagetools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/browser/pagetools"
	"github.com/mcpx/mcpx/internal/testenv"
)

// listed is one tool of Hub.Tools, decoded.
type listed struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Meta        map[string]struct {
		Domain string `json:"domain"`
		URL    string `json:"url"`
		Tab    int    `json:"tab"`
		Tabs   []int  `json:"tabs"`
		Cached bool   `json:"cached"`
	} `json:"_meta"`
}

// rig is a headless Chromium with the test extension on a local relay,
// the browser tools' client (the "model"), and a Hub over it.
type rig struct {
	t       *testing.T
	ctx     context.Context
	port    string
	driver  *browser.Client
	tools   *browser.Tools
	hub     *pagetools.Hub
	changes chan struct{}
	chrome  *browsertest.Chromium
	log     *testenv.Buffer // the hub's log, debug included, for a failure to show
}

func newRig(t *testing.T, opts pagetools.Options) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	srv := newPageServer(t)
	u, _ := url.Parse(srv.URL)
	relay := browsertest.NewRelay(&browsertest.RelayOptions{Local: true})
	t.Cleanup(relay.Close)
	chrome := browsertest.StartChromium(t, relay.ExtensionURL(), "")
	driver := browser.NewClient(browser.Options{URL: relay.MCPURL(), ClientID: "model"})
	driver.Start(ctx)
	t.Cleanup(func() { driver.Close() })
	looker := browser.NewClient(browser.Options{URL: relay.MCPURL(), ClientID: "pages"})
	looker.Start(ctx)
	t.Cleanup(func() { looker.Close() })
	r := &rig{t: t, ctx: ctx, port: u.Port(), driver: driver, tools: browser.NewTools(driver, nil),
		changes: make(chan struct{}, 1), chrome: chrome, log: &testenv.Buffer{}}
	opts.Driver, opts.Looker = driver, looker
	if opts.Logger == nil {
		opts.Logger = slog.New(log.NewWithOptions(r.log, log.Options{Level: log.DebugLevel, ReportTimestamp: true}))
	}
	opts.OnChange = func() {
		select {
		case r.changes <- struct{}{}:
		default:
		}
	}
	if opts.Interval == 0 {
		opts.Interval = 200 * time.Millisecond
	}
	r.hub = pagetools.New(opts)
	r.hub.Start(ctx)
	t.Cleanup(r.hub.Close)
	return r
}

// page is the URL of a test page at host (a *.localhost name: loopback,
// and a secure context, as WebMCP wants).
func (r *rig) page(host, path string) string {
	return fmt.Sprintf("http://%s:%s%s", host, r.port, path)
}

// browse opens url in a new tab as the model does (browser_tabs new).
func (r *rig) browse(url string) {
	r.t.Helper()
	res := r.tools.Call(r.ctx, "tabs", json.RawMessage(fmt.Sprintf(`{"action":"new","url":%q}`, url)))
	if text, isErr := resultText(res); isErr {
		r.t.Fatalf("open %s: %s", url, text)
	}
}

// list returns the hub's tools by name.
func (r *rig) list() map[string]listed {
	out := map[string]listed{}
	for _, raw := range r.hub.Tools() {
		var l listed
		if err := json.Unmarshal(raw, &l); err != nil {
			r.t.Fatalf("tool %s: %v", raw, err)
		}
		out[l.Name] = l
	}
	return out
}

// waitList waits, change by change, until ok holds for the list.
func (r *rig) waitList(what string, ok func(map[string]listed) bool) map[string]listed {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		l := r.list()
		if ok(l) {
			return l
		}
		select {
		case <-r.changes:
		case <-deadline:
			r.t.Fatalf("waiting for %s; the list has %v\nhub:\n%s\nchromium:\n%s", what, names(l), r.log, r.chrome.Output())
		}
	}
}

func names(l map[string]listed) []string {
	var out []string
	for n := range l {
		out = append(out, n)
	}
	return out
}

func has(names ...string) func(map[string]listed) bool {
	return func(l map[string]listed) bool {
		for _, n := range names {
			if _, ok := l[n]; !ok {
				return false
			}
		}
		return true
	}
}

func lacks(name string) func(map[string]listed) bool {
	return func(l map[string]listed) bool { _, ok := l[name]; return !ok }
}

// call calls a listed tool through the Hub as the aggregator does.
func (r *rig) call(name, args string) (string, bool) {
	r.t.Helper()
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": json.RawMessage(args)})
	res, err := r.hub.Request(r.ctx, "tools/call", params)
	if err != nil {
		r.t.Fatalf("call %s: %v", name, err)
	}
	return resultText(res)
}

func resultText(res json.RawMessage) (string, bool) {
	var v struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	_ = json.Unmarshal(res, &v)
	var b strings.Builder
	for _, c := range v.Content {
		b.WriteString(c.Text)
	}
	if len(v.StructuredContent) > 0 {
		b.WriteString(" structured:" + string(v.StructuredContent))
	}
	return b.String(), v.IsError
}

func (r *rig) want(name, args, want string, wantErr bool) {
	r.t.Helper()
	got, isErr := r.call(name, args)
	if isErr != wantErr || !strings.Contains(got, want) {
		r.t.Errorf("%s(%s) = %q (isError %v); want %q (isError %v)", name, args, got, isErr, want, wantErr)
	}
}

// TestPageTools drives one headless Chromium through the cases of the
// page tools: discovery through the real MCP-B packages, naming, calls
// and the page's own errors, a tool added and removed after load, a
// denied domain, a cross-domain pair, two tabs of one domain with equal
// and then different tool sets, and a closed tab that a call reopens.
func TestPageTools(t *testing.T) {
	r := newRig(t, pagetools.Options{Deny: []string{"denied.localhost"}, CallTimeout: 2 * time.Second})

	// Discovery in the tab the model opened, and naming.
	r.browse(r.page("shop.localhost", "/shop"))
	l := r.waitList("the shop's tools", has("shop_localhost_add_to_cart", "shop_localhost_explode", "shop_localhost_refuse", "shop_localhost_hang", "shop_localhost_slow"))
	if len(l) != 5 {
		t.Errorf("listed %v; want the shop's 5 tools", names(l))
	}
	add := l["shop_localhost_add_to_cart"]
	for _, want := range []string{"shop.localhost", "tab 1", `"Shop"`, "session", "Add a product to the cart"} {
		if !strings.Contains(add.Description, want) {
			t.Errorf("description %q lacks %q", add.Description, want)
		}
	}
	if m := add.Meta["mcpx/page"]; m.Domain != "shop.localhost" || m.Tab != 1 || m.Cached {
		t.Errorf("_meta %+v; want domain shop.localhost, tab 1", m)
	}
	if !strings.Contains(string(add.InputSchema), `"sku"`) {
		t.Errorf("inputSchema %s; want the page's", add.InputSchema)
	}

	// Calls, and the page's errors as the page said them.
	r.want("shop_localhost_add_to_cart", `{"sku":"A1"}`, "added A1 in (no query)", false)
	r.want("shop_localhost_explode", `{}`, "kaboom", true)
	r.want("shop_localhost_refuse", `{}`, "the cart is locked", true)
	r.want("shop_localhost_slow", `{}`, "slow done", false) // answered after mcpx started polling
	r.want("shop_localhost_hang", `{}`, "did not answer hang within 2s", true)

	// A tool registered after load, then unregistered.
	if _, err := r.driver.Eval(r.ctx, "addCoupon()"); err != nil {
		t.Fatal(err)
	}
	r.waitList("apply_coupon added", has("shop_localhost_apply_coupon"))
	r.want("shop_localhost_apply_coupon", `{}`, "coupon applied", false)
	if _, err := r.driver.Eval(r.ctx, "removeCoupon()"); err != nil {
		t.Fatal(err)
	}
	r.waitList("apply_coupon removed", lacks("shop_localhost_apply_coupon"))

	// A denied domain, opened by the model, is never listed: a later
	// site's tools show, the denied one's do not.
	r.browse(r.page("denied.localhost", "/shop"))
	r.browse(r.page("news.localhost", "/news"))
	l = r.waitList("the news tools", has("news_localhost_headline"))
	for n := range l {
		if strings.HasPrefix(n, "denied") {
			t.Errorf("denied domain listed: %s", n)
		}
	}
	// Cross-domain: each call goes to its own site's tab; the shop's tab
	// is no longer the model's.
	r.want("news_localhost_headline", `{}`, `"headline":"Go 2 released"`, false)
	r.want("news_localhost_headline", `{}`, `"at":"news.localhost:`, false)
	r.want("shop_localhost_add_to_cart", `{"sku":"B2"}`, "added B2 in (no query)", false)

	// A second tab of the shop with the same tools: one set of names, the
	// call goes to the active (newest) tab.
	r.browse(r.page("shop.localhost", "/shop?same=2"))
	r.waitList("both shop tabs", func(l map[string]listed) bool {
		return len(l["shop_localhost_add_to_cart"].Meta["mcpx/page"].Tabs) == 2
	})
	r.want("shop_localhost_add_to_cart", `{"sku":"C3"}`, "added C3 in ?same=2", false)

	// A third with a different set: now each tab's names carry its number.
	r.browse(r.page("shop.localhost", "/shop?variant=b"))
	l = r.waitList("per-tab shop names", has("shop_localhost_tab1_add_to_cart", "shop_localhost_tab2_add_to_cart",
		"shop_localhost_tab3_add_to_cart", "shop_localhost_tab3_compare"))
	if _, ok := l["shop_localhost_add_to_cart"]; ok {
		t.Errorf("the domain-wide name stayed beside the per-tab ones")
	}
	if m := l["shop_localhost_tab2_add_to_cart"].Meta["mcpx/page"]; m.Tab != 2 || strings.Contains(m.URL, "same") ||
		strings.Contains(l["shop_localhost_tab2_add_to_cart"].Description, "same=2") {
		t.Errorf("tab 2: _meta %+v; want tab 2 and its URL without the query (it may carry a session)", m)
	}
	r.want("shop_localhost_tab1_add_to_cart", `{"sku":"D4"}`, "added D4 in (no query)", false)
	r.want("shop_localhost_tab2_add_to_cart", `{"sku":"E5"}`, "added E5 in ?same=2", false)
	r.want("shop_localhost_tab3_compare", `{}`, "compared in ?variant=b", false)

	// The news tab closes: its tool stays listed (cached) and a call
	// opens the page again.
	closeTabOf(t, r, "news.localhost")
	r.waitList("the news tool cached", func(l map[string]listed) bool {
		return l["news_localhost_headline"].Meta["mcpx/page"].Cached
	})
	r.want("news_localhost_headline", `{}`, `"headline":"Go 2 released"`, false)
	tabs, err := r.driver.Tabs(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	reopened := 0
	for _, tb := range tabs {
		if strings.Contains(tb.URL, "news.localhost") {
			reopened++
		}
	}
	if reopened != 1 {
		t.Errorf("%d news tabs after the call; want the one it opened again", reopened)
	}
	r.waitList("the news tool live again", func(l map[string]listed) bool {
		m, ok := l["news_localhost_headline"].Meta["mcpx/page"]
		return ok && !m.Cached
	})

	// The model's tab (the shop's variant b) navigates to the news site:
	// the shop is back to one tool set in its open tabs (no tab numbers),
	// the variant's own tool stays listed from its page, which a call
	// opens again, and the news site has two tabs.
	res := r.tools.Call(r.ctx, "navigate", json.RawMessage(fmt.Sprintf(`{"url":%q}`, r.page("news.localhost", "/news"))))
	if text, isErr := resultText(res); isErr {
		t.Fatalf("navigate: %s", text)
	}
	l = r.waitList("the navigated tab re-checked", func(l map[string]listed) bool {
		return len(l["news_localhost_headline"].Meta["mcpx/page"].Tabs) == 2
	})
	if _, ok := l["shop_localhost_add_to_cart"]; !ok {
		t.Errorf("the shop's tools are not back under one name: %v", names(l))
	}
	for n := range l {
		if strings.Contains(n, "_tab") {
			t.Errorf("%s still listed after its page navigated away", n)
		}
	}
	if m := l["shop_localhost_compare"].Meta["mcpx/page"]; !m.Cached || m.Domain != "shop.localhost" {
		t.Errorf("shop_localhost_compare _meta %+v; want it listed from the variant's page, gone", m)
	}
}

// closeTabOf closes the tab showing host as the model would
// (browser_tabs close with its index).
func closeTabOf(t *testing.T, r *rig, host string) {
	t.Helper()
	tabs, err := r.driver.Tabs(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range tabs {
		if !strings.Contains(tb.URL, host) {
			continue
		}
		if tb.Index != nil {
			i = *tb.Index
		}
		res := r.tools.Call(r.ctx, "tabs", json.RawMessage(fmt.Sprintf(`{"action":"close","index":%d}`, i)))
		if text, isErr := resultText(res); isErr {
			t.Fatalf("close %s: %s", host, text)
		}
		return
	}
	t.Fatalf("no tab shows %s", host)
}
