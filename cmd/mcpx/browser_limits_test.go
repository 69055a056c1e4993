package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpx/mcpx/browser/browsertest"
)

// TestBrowserLimitsFromConfig: browser.maxSnapshotChars in the config
// file bounds what `mcpx serve` returns, and a bad value is an error that
// names the field.
func TestBrowserLimitsFromConfig(t *testing.T) {
	relay := browsertest.NewRelay(nil)
	defer relay.Close()
	token := relay.Token("user-1", time.Hour)
	ext := browsertest.NewExtension(browsertest.V19, "Chrome 141")
	defer ext.Close()
	if err := ext.Connect(t.Context(), relay.ExtensionURL(), token); err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]string
	for i := range 1000 {
		msgs = append(msgs, map[string]string{"type": "log", "text": fmt.Sprintf("line %d", i)})
	}
	ext.Handle("getConsoleMessages", func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"messages": msgs}, nil
	})
	cfg := writeConfig(t, map[string]any{"browser": map[string]any{"token": token, "maxSnapshotChars": 2500, "maxImageBytes": "64KiB"}})
	c := startServe(t, cfg)
	c.initialize()
	raw, e := c.request("tools/call", map[string]any{"name": "browser_console_messages", "arguments": map[string]any{}})
	if e != nil {
		t.Fatal(e.Message)
	}
	var r struct{ Content []struct{ Text string } }
	json.Unmarshal(raw, &r)
	if len(r.Content) != 1 || utf8.RuneCountInString(r.Content[0].Text) > 2500 || !strings.HasPrefix(r.Content[0].Text, "1000 console messages; showing the last") {
		t.Errorf("console messages under maxSnapshotChars 2500: %.300s", raw)
	}

	bad := writeConfig(t, map[string]any{"browser": map[string]any{"token": token, "maxImageBytes": "lots"}})
	_, errOut, code := runCLI(t, "", "servers", "--config", bad)
	if code == 0 || !strings.Contains(errOut, `browser.maxImageBytes: "lots": not a size`) {
		t.Errorf("a bad maxImageBytes: exit %d, %s", code, errOut)
	}
}
