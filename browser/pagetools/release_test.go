package pagetools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/browser/pagetools"
)

// TestLookerLetsGoOfTabs uses the scripted v1.5 extension, which (like
// the real one, and unlike the Chromium test extension) refuses to attach
// a tab another connection holds. The model drove two tabs; the Hub
// looked into the older one through its own connection. Afterwards the
// model can still select that tab: the Hub let go of it.
func TestLookerLetsGoOfTabs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	relay := browsertest.NewRelay(&browsertest.RelayOptions{Local: true})
	defer relay.Close()
	ext := browsertest.NewExtension(browsertest.V15, "Chrome v1.5")
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
	// A long interval: the check after the tabs opened is the last one
	// before the model selects the old tab.
	hub := pagetools.New(pagetools.Options{Driver: driver, Looker: looker, Interval: 2 * time.Second,
		OnChange: func() {
			select {
			case changes <- struct{}{}:
			default:
			}
		}})
	hub.Start(ctx)
	defer hub.Close()

	tools := browser.NewTools(driver, nil)
	run := func(args string) string {
		t.Helper()
		text, isErr := resultText(tools.Call(ctx, "tabs", json.RawMessage(args)))
		if isErr {
			t.Fatalf("browser_tabs %s: %s", args, text)
		}
		return text
	}
	run(`{"action":"new","url":"http://shop.test/a"}`)
	run(`{"action":"new","url":"http://shop.test/b"}`)
	for {
		var l []listed
		for _, raw := range hub.Tools() {
			var x listed
			_ = json.Unmarshal(raw, &x)
			l = append(l, x)
		}
		if len(l) == 1 && len(l[0].Meta["mcpx/page"].Tabs) == 2 {
			break // both tabs looked into: the old one through the Hub's connection
		}
		select {
		case <-changes:
		case <-ctx.Done():
			t.Fatalf("the shop's tool in both tabs never showed: %+v", l)
		}
	}
	// The check that listed both tabs lets go of the one it looked into
	// when it ends.
	for looker.AttachedTab() != "" {
		select {
		case <-ctx.Done():
			t.Fatalf("the Hub's connection still holds tab %s", looker.AttachedTab())
		case <-time.After(10 * time.Millisecond):
		}
	}
	tabs, err := driver.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range tabs {
		if tb.URL == "http://shop.test/a" {
			run(fmt.Sprintf(`{"action":"select","index":%d}`, i))
			return
		}
	}
	t.Fatalf("no tab shows shop.test/a: %+v", tabs)
}
