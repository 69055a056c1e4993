package pagetools_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/browser/pagetools"
)

// TestModelOpensTabDuringCheck reproduces, step by step, the ordering
// behind TestPageTools' renumbered tabs. The Hub looks into the model's
// tab through the model's own connection. The model opens another tab:
// the extension attaches it to that connection at once, but its answer
// is still on the way, so the Client still names the old tab as its own.
// An evaluation sent then runs in the new tab; the Hub took that page
// for the old tab's, dropped the old tab as navigated away, and numbered
// it again when it came back. Now the Hub does not evaluate through the
// model's connection while it may be moving, and its checks leave the
// shop's tab as it was: still tab 1, its tools live.
func TestModelOpensTabDuringCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	relay := browsertest.NewRelay(&browsertest.RelayOptions{Local: true})
	defer relay.Close()
	ext := browsertest.NewExtension(browsertest.V19, "Chrome v1.9")
	defer ext.Close()

	// What an evaluation through the model's connection finds: the page
	// of the tab the extension has attached to it. (The Hub has no
	// connection of its own here, so every evaluation is the model's.)
	var mu sync.Mutex
	page := "http://shop.test/a"
	ext.Handle("forwardCDPCommand:Runtime.evaluate", func(_ context.Context, params json.RawMessage) (any, error) {
		var p struct{ Expression string }
		_ = json.Unmarshal(params, &p)
		mu.Lock()
		href := page
		mu.Unlock()
		var value any = "complete"
		if strings.HasSuffix(p.Expression, `({"op":"list"})`) {
			tool := "add"
			if strings.Contains(href, "news") {
				tool = "headline"
			}
			value = map[string]any{"href": href, "title": "Page", "api": "modelContext",
				"tools": []any{map[string]any{"name": tool, "inputSchema": map[string]any{"type": "object"}}}}
		}
		return map[string]any{"result": map[string]any{"type": "object", "value": value}}, nil
	})
	if err := ext.Connect(ctx, relay.ExtensionURL(), ""); err != nil {
		t.Fatal(err)
	}
	driver := browser.NewClient(browser.Options{URL: relay.MCPURL(), ClientID: "model"})
	driver.Start(ctx)
	defer driver.Close()
	changes := make(chan struct{}, 1)
	hub := pagetools.New(pagetools.Options{Driver: driver, Interval: 20 * time.Millisecond,
		OnChange: func() {
			select {
			case changes <- struct{}{}:
			default:
			}
		}})
	hub.Start(ctx)
	defer hub.Close()
	tools := browser.NewTools(driver, nil)
	shop := func() (listed, bool) {
		for _, raw := range hub.Tools() {
			var l listed
			_ = json.Unmarshal(raw, &l)
			if l.Name == "shop_test_add" {
				return l, true
			}
		}
		return listed{}, false
	}

	if text, isErr := resultText(tools.Call(ctx, "tabs", json.RawMessage(`{"action":"new","url":"http://shop.test/a"}`))); isErr {
		t.Fatal(text)
	}
	for {
		if l, ok := shop(); ok && !l.Meta["mcpx/page"].Cached {
			break
		}
		select {
		case <-changes:
		case <-ctx.Done():
			t.Fatalf("the shop's tool never showed: %s", hub.Tools())
		}
	}

	// The model opens the news site: the extension attaches the new tab
	// and holds its answer until the Hub has checked twice.
	tabs := ext.Tabs()
	checks := make(chan struct{}, 16)
	ext.Handle("getTabs", func(context.Context, json.RawMessage) (any, error) {
		list := make([]map[string]any, len(tabs))
		for i, tb := range tabs {
			list[i] = map[string]any{"id": tb.ID, "url": tb.URL, "title": tb.Title, "index": i, "active": i == len(tabs)-1}
		}
		select {
		case checks <- struct{}{}:
		default:
		}
		return map[string]any{"tabs": list}, nil
	})
	attached, answer := make(chan struct{}), make(chan struct{})
	ext.Handle("createTab", func(ctx context.Context, _ json.RawMessage) (any, error) {
		mu.Lock()
		page = "http://news.test/"
		mu.Unlock()
		close(attached)
		select {
		case <-answer:
		case <-ctx.Done():
		}
		return map[string]any{"tab": map[string]any{"id": 99, "url": "http://news.test/", "title": "News"}}, nil
	})
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		tools.Call(ctx, "tabs", json.RawMessage(`{"action":"new","url":"http://news.test/"}`))
	}()
	<-attached
	for len(checks) > 0 {
		<-checks // listings from before
	}
	// Each check lists the tabs once: by the third listing after the
	// new tab was attached, two whole checks ran.
	for range 3 {
		select {
		case <-checks:
		case <-ctx.Done():
			t.Fatal("the Hub stopped checking")
		}
	}
	l, ok := shop()
	close(answer)
	<-opened
	if m := l.Meta["mcpx/page"]; !ok || m.Cached || m.Tab != 1 || m.Domain != "shop.test" {
		t.Errorf("after checks while the model's new tab was on its way: shop_test_add listed %v, _meta %+v; want tab 1 of shop.test, live\n%s",
			ok, m, hub.Tools())
	}
}
