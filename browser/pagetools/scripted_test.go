package pagetools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/browser/pagetools"
)

// scriptedPage makes a scripted extension answer the Hub's script as a
// page with one WebMCP tool "add" would; anything else (the browser
// tools' readyState) is "complete".
func scriptedPage(ext *browsertest.Extension) {
	ext.Handle("forwardCDPCommand:Runtime.evaluate", func(_ context.Context, params json.RawMessage) (any, error) {
		var p struct{ Expression string }
		_ = json.Unmarshal(params, &p)
		var value any = "complete"
		switch {
		case strings.HasSuffix(p.Expression, `({"op":"list"})`):
			value = map[string]any{"href": "", "title": "Shop", "api": "modelContext",
				"tools": []any{map[string]any{"name": "add", "description": "Add", "inputSchema": map[string]any{"type": "object"}}}}
		case strings.Contains(p.Expression, `"op":"start"`):
			value = map[string]any{"started": true, "ok": true, "result": `{"content":[{"type":"text","text":"added"}]}`}
		}
		return map[string]any{"result": map[string]any{"type": "object", "value": value}}, nil
	})
}

// TestNoCache: with the cache off, a site's tools go with its last tab,
// and a call to one is an error, not a reopened tab.
func TestNoCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	relay := browsertest.NewRelay(&browsertest.RelayOptions{Local: true})
	defer relay.Close()
	ext := browsertest.NewExtension(browsertest.V19, "Chrome v1.9") // its closeTab closes
	defer ext.Close()
	scriptedPage(ext)
	if err := ext.Connect(ctx, relay.ExtensionURL(), ""); err != nil {
		t.Fatal(err)
	}
	driver := browser.NewClient(browser.Options{URL: relay.MCPURL(), ClientID: "model"})
	driver.Start(ctx)
	defer driver.Close()
	looker := browser.NewClient(browser.Options{URL: relay.MCPURL(), ClientID: "pages"})
	looker.Start(ctx)
	defer looker.Close()
	changes := make(chan struct{}, 1)
	hub := pagetools.New(pagetools.Options{Driver: driver, Looker: looker, NoCache: true, Interval: 100 * time.Millisecond,
		OnChange: func() {
			select {
			case changes <- struct{}{}:
			default:
			}
		}})
	hub.Start(ctx)
	defer hub.Close()
	tools := browser.NewTools(driver, nil)
	waitCount := func(n int) {
		t.Helper()
		for len(hub.Tools()) != n {
			select {
			case <-changes:
			case <-ctx.Done():
				t.Fatalf("the hub lists %d tools; want %d", len(hub.Tools()), n)
			}
		}
	}

	if text, isErr := resultText(tools.Call(ctx, "tabs", json.RawMessage(`{"action":"new","url":"http://shop.test/a"}`))); isErr {
		t.Fatal(text)
	}
	waitCount(1)
	params := json.RawMessage(`{"name":"shop_test_add","arguments":{}}`)
	if res, err := hub.Request(ctx, "tools/call", params); err != nil || !strings.Contains(string(res), `"added"`) {
		t.Fatalf("call while the tab is open: %s, %v", res, err)
	}
	before := len(ext.Tabs())
	if text, isErr := resultText(tools.Call(ctx, "tabs", json.RawMessage(fmt.Sprintf(`{"action":"close","index":%d}`, before-1)))); isErr {
		t.Fatal(text)
	}
	waitCount(0)
	if res, err := hub.Request(ctx, "tools/call", params); err == nil {
		t.Errorf("call after the tab closed = %s; want an error (no such tool)", res)
	}
	if n := len(ext.Tabs()); n != before-1 {
		t.Errorf("%d tabs; want %d: nothing reopened", n, before-1)
	}
}
