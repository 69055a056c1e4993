package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
)

// The first browser call of a session: no tab yet, and right after start
// perhaps no browser yet either (issue 41: with the real Blueprint v1.5
// extension browser_navigate failed with "createTab: Cannot automate tab
// with URL: about:blank" and left a blank tab; browser_list said "no
// browser").

// sentCreateTabs returns the url of every createTab the relay got from
// MCP clients.
func sentCreateTabs(r *browsertest.Relay) []string {
	var urls []string
	for _, f := range r.Frames() {
		var m struct {
			Method string
			Params struct{ URL string }
		}
		if json.Unmarshal(f.Data, &m) == nil && f.Side == browsertest.SideMCP && m.Method == "createTab" {
			urls = append(urls, m.Params.URL)
		}
	}
	return urls
}

// TestNavigateFirstOpensItsTab: browser_navigate as the first call opens
// its tab at the URL itself, on both extension generations (v1.5 refuses
// to automate about:blank), and leaves no blank tab.
func TestNavigateFirstOpensItsTab(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			s := newSetup(t, d, nil, browser.Options{})
			s.ext.AddPage("https://example.test/first", "First Page")
			before := s.ext.Tabs()
			r := s.call(t, "navigate", `{"url":"https://example.test/first"}`)
			if r.IsError || !strings.Contains(r.text(), "Navigated to https://example.test/first") {
				t.Fatalf("navigate as the first call: %s", r.text())
			}
			if got := sentCreateTabs(s.relay); len(got) != 1 || got[0] != "https://example.test/first" {
				t.Errorf("createTab sent with %q, want once with the URL navigated to", got)
			}
			after := s.ext.Tabs()
			if len(after) != len(before)+1 || after[len(after)-1].URL != "https://example.test/first" {
				t.Errorf("tabs %+v, want those before (%+v) and the page's", after, before)
			}
			// The next navigation goes to that same tab.
			s.ext.AddPage("https://example.test/second", "Second Page")
			if r := s.call(t, "navigate", `{"url":"https://example.test/second"}`); r.IsError {
				t.Fatalf("second navigate: %s", r.text())
			}
			if got := s.ext.Tabs(); got[len(got)-1].URL != "https://example.test/second" {
				t.Errorf("after the second navigate the tabs are %+v", got)
			}
			if n := len(s.ext.Tabs()); n != len(after) || len(sentCreateTabs(s.relay)) != 1 {
				t.Errorf("the second navigate opened a tab: %d tabs, createTab %q", n, sentCreateTabs(s.relay))
			}
		})
	}
}

// TestNoTabIsNotABlankTab: a tool other than navigate with no tab to work
// in opens none (a blank tab is useless, and v1.5 refuses to drive it): it
// says how to get one.
func TestNoTabIsNotABlankTab(t *testing.T) {
	s := newSetup(t, browsertest.V15, nil, browser.Options{})
	before := len(s.ext.Tabs())
	for _, tool := range []string{"snapshot", "take_screenshot", "reload"} {
		if r := s.call(t, tool, `{}`); !r.IsError || !strings.Contains(r.text(), "no tab to work in: open a page with browser_navigate") {
			t.Errorf("%s with no tab: %+v", tool, r)
		}
	}
	if n := len(s.ext.Tabs()); n != before || len(sentCreateTabs(s.relay)) != 0 {
		t.Errorf("%d tabs (was %d), createTab %q: a tool opened a tab", n, before, sentCreateTabs(s.relay))
	}
}

// TestRefusedBlankTabIsClosed: v1.5 refuses to automate a blank tab after
// opening it, and points the connection at it; its closeTab does
// nothing. browser_tabs new without a URL says to give one, the blank tab
// is closed (through Page.close), and the tab the client worked in is
// still the one its calls go to.
func TestRefusedBlankTabIsClosed(t *testing.T) {
	s := newSetup(t, browsertest.V15, nil, browser.Options{})
	s.ext.AddPage("https://example.test/work", "Work")
	if r := s.call(t, "navigate", `{"url":"https://example.test/work"}`); r.IsError {
		t.Fatalf("navigate: %s", r.text())
	}
	before := s.ext.Tabs()
	r := s.call(t, "tabs", `{"action":"new"}`)
	if !r.IsError || !strings.Contains(r.text(), "Cannot automate tab with URL: about:blank") || !strings.Contains(r.text(), "give a web page's URL") {
		t.Fatalf("tabs new without a URL: %+v", r)
	}
	if after := s.ext.Tabs(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("tabs after the refusal %+v, want those before %+v", after, before)
	}
	href, err := s.c.Eval(t.Context(), "location.href")
	if err != nil || string(href) != `"https://example.test/work"` {
		t.Errorf("after the refusal the client evaluates in %s (%v), want its tab", href, err)
	}
	if got := s.c.WorkedTabs(); len(got) != 1 {
		t.Errorf("worked tabs %q: the closed blank tab is among them", got)
	}

	// With no tab before, the same, and navigate works afterwards.
	s2 := newSetup(t, browsertest.V15, nil, browser.Options{})
	before = s2.ext.Tabs()
	if r := s2.call(t, "navigate", `{"url":"about:blank"}`); !r.IsError || !strings.Contains(r.text(), "Cannot automate tab with URL: about:blank") {
		t.Fatalf("navigate to about:blank as the first call: %+v", r)
	}
	if after := s2.ext.Tabs(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("tabs after the refusal %+v, want %+v", after, before)
	}
	if r := s2.call(t, "navigate", `{"url":"https://example.test/"}`); r.IsError {
		t.Errorf("navigate after a refusal: %s", r.text())
	}
}

// TestBrowserPagesAreNotOpened: a browser page (chrome:, extensions) no
// extension can drive, and v1.5 could not even close again, is refused
// before any tab opens.
func TestBrowserPagesAreNotOpened(t *testing.T) {
	s := newSetup(t, browsertest.V15, nil, browser.Options{})
	before := s.ext.Tabs()
	for _, args := range []string{`{"action":"new","url":"chrome://settings"}`, `{"action":"new","url":"chrome-extension://abc/popup.html"}`} {
		if r := s.call(t, "tabs", args); !r.IsError || !strings.Contains(r.text(), "cannot drive the browser's own pages") {
			t.Errorf("tabs %s: %+v", args, r)
		}
	}
	if r := s.call(t, "navigate", `{"url":"chrome://settings"}`); !r.IsError || !strings.Contains(r.text(), "cannot drive the browser's own pages") {
		t.Errorf("navigate to chrome://settings as the first call: %+v", r)
	}
	if after := s.ext.Tabs(); fmt.Sprint(after) != fmt.Sprint(before) || len(sentCreateTabs(s.relay)) != 0 {
		t.Errorf("tabs %+v (want %+v), createTab sent %q", after, before, sentCreateTabs(s.relay))
	}
}

// awaitMCPFrame waits until the relay has got method from an MCP client.
func awaitMCPFrame(t *testing.T, r *browsertest.Relay, method string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		for _, f := range r.Frames() {
			var m struct{ Method string }
			if json.Unmarshal(f.Data, &m) == nil && f.Side == browsertest.SideMCP && m.Method == method {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the client never sent %s", method)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// startedClient is a client of r's user "user-1", started, with no
// browser on the relay yet.
func startedClient(t *testing.T, r *browsertest.Relay, opts browser.Options) (*browser.Client, *browser.Tools) {
	t.Helper()
	opts.Token = r.Token("user-1", time.Hour)
	c := browser.NewClient(opts)
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	return c, browser.NewTools(c, nil)
}

func callTool(t *testing.T, tools *browser.Tools, name, args string) toolResult {
	t.Helper()
	return decodeResult(t, tools.Call(t.Context(), name, json.RawMessage(args)))
}

// callLater calls a tool in the background; decodeResult reads its answer.
func callLater(t *testing.T, tools *browser.Tools, name, args string) <-chan json.RawMessage {
	out := make(chan json.RawMessage, 1)
	go func() { out <- tools.Call(t.Context(), name, json.RawMessage(args)) }()
	return out
}

func decodeResult(t *testing.T, raw json.RawMessage) toolResult {
	t.Helper()
	var r toolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return r
}

// TestListWaitsForTheBrowser: browser_list right after start, before the
// extension has found the relay, waits for it and lists it; the same for
// a first navigate.
func TestListWaitsForTheBrowser(t *testing.T) {
	r := browsertest.NewRelay(nil)
	t.Cleanup(r.Close)
	_, tools := startedClient(t, r, browser.Options{ExtensionWait: time.Minute})
	listed := callLater(t, tools, "list", `{}`)
	awaitMCPFrame(t, r, "list_extensions") // asked while no browser is there
	ext := browsertest.NewExtension(browsertest.V15, "Late Chrome")
	t.Cleanup(ext.Close)
	if err := ext.Connect(t.Context(), r.ExtensionURL(), r.Token("user-1", time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := decodeResult(t, <-listed); got.IsError || !strings.Contains(got.text(), "Late Chrome (id ") {
		t.Fatalf("browser_list: %+v", got)
	}

	r2 := browsertest.NewRelay(nil)
	t.Cleanup(r2.Close)
	_, tools2 := startedClient(t, r2, browser.Options{ExtensionWait: time.Minute})
	navigated := callLater(t, tools2, "navigate", `{"url":"https://example.test/"}`)
	awaitMCPFrame(t, r2, "list_extensions")
	ext2 := browsertest.NewExtension(browsertest.V15, "Late Chrome")
	t.Cleanup(ext2.Close)
	if err := ext2.Connect(t.Context(), r2.ExtensionURL(), r2.Token("user-1", time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := decodeResult(t, <-navigated); got.IsError {
		t.Fatalf("navigate before the browser came: %s", got.text())
	}
}

// TestListSaysNoBrowserCame: with no browser within the wait,
// browser_list says so, and how to get one; a call that needs the
// browser is an error saying the same.
func TestListSaysNoBrowserCame(t *testing.T) {
	r := browsertest.NewRelay(nil)
	t.Cleanup(r.Close)
	_, tools := startedClient(t, r, browser.Options{ExtensionWait: 50 * time.Millisecond})
	got := callTool(t, tools, "list", `{}`)
	if got.IsError || !strings.Contains(got.text(), "No browser is connected to the relay: none came within 50ms") || !strings.Contains(got.text(), "Open Chrome with the browser extension") {
		t.Errorf("browser_list with no browser: %+v", got)
	}
	got = callTool(t, tools, "navigate", `{"url":"https://example.test/"}`)
	if !got.IsError || !strings.Contains(got.text(), "no browser is connected to the relay: none came within a few seconds") {
		t.Errorf("navigate with no browser: %+v", got)
	}
}

// TestFirstCallsOnChromium: the same on headless Chromium with the test
// extension, whose createTab refuses about: pages as v1.5's does (and
// whose closeTab closes): browser_list right after start lists the
// browser that connects after it asked; navigate as the first call opens
// its tab at its URL; browser_tabs new without a URL is refused and the
// blank tab closed; the client still works in its tab.
func TestFirstCallsOnChromium(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>Page %s</title><h1>Page %s</h1>", r.URL.Path[1:], r.URL.Path[1:])
	}))
	defer page.Close()
	relay := browsertest.NewRelay(nil)
	defer relay.Close()
	c, tools := startedClient(t, relay, browser.Options{ExtensionWait: time.Minute})
	listed := callLater(t, tools, "list", `{}`)
	awaitMCPFrame(t, relay, "list_extensions")
	chrome := browsertest.LaunchChromium(t, relay.ExtensionURL(), relay.Token("user-1", time.Hour))
	if got := decodeResult(t, <-listed); got.IsError || !strings.Contains(got.text(), chrome.Name+" (id ") {
		t.Fatalf("browser_list right after start: %+v\nchromium:\n%s", got, chrome.Output())
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	before, err := c.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := callTool(t, tools, "navigate", fmt.Sprintf(`{"url":%q}`, page.URL+"/first"))
	if r.IsError || !strings.Contains(r.text(), "Page Title: Page first") {
		t.Fatalf("navigate as the first call: %s\nchromium:\n%s", r.text(), chrome.Output())
	}
	withPage, err := c.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(withPage) != len(before)+1 {
		t.Errorf("tabs after the first navigate: %+v, want those before (%+v) and the page's", withPage, before)
	}
	r = callTool(t, tools, "tabs", `{"action":"new"}`)
	if !r.IsError || !strings.Contains(r.text(), "Cannot automate tab with URL: about:blank") {
		t.Fatalf("tabs new without a URL: %+v", r)
	}
	after, err := c.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(after)) != fmt.Sprint(ids(withPage)) {
		t.Errorf("tabs after the refusal %+v, want %+v: the blank tab was left", after, withPage)
	}
	if got := callTool(t, tools, "snapshot", `{}`); got.IsError || !strings.Contains(got.text(), `heading "Page first"`) {
		t.Errorf("snapshot after the refusal: %s", got.text())
	}
}

func ids(tabs []browser.Tab) []string {
	out := make([]string, len(tabs))
	for i, t := range tabs {
		out[i] = string(t.ID)
	}
	return out
}
