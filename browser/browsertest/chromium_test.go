package browsertest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestChromium drives real headless Chromium and the test extension over
// the relay, as mcpx does. Without Chromium it fails: it is never skipped.
func TestChromium(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Probe Page</title><h1>Hello</h1><input aria-label="Query"><button>Go</button>`)
	}))
	defer page.Close()
	r := newRelay(t, &RelayOptions{StatusInterval: 2 * time.Second})

	start := time.Now()
	c := StartChromium(t, r.ExtensionURL(), r.Token("alice", time.Hour))
	t.Logf("extension connected after %v", time.Since(start).Round(time.Millisecond))

	rc := handshakeMCP(t, r, "alice")
	mustCall(t, rc, "connect", map[string]any{"extension_id": c.ExtensionID})

	step := time.Now()
	var created struct {
		Tab struct {
			ID    int    `json:"id"`
			Title string `json:"title"`
			URL   string `json:"url"`
		} `json:"tab"`
	}
	unmarshal(t, mustCall(t, rc, "createTab", map[string]any{"url": page.URL + "/", "activate": true}), &created)
	if created.Tab.ID == 0 || created.Tab.Title != "Probe Page" {
		t.Fatalf("createTab: %+v", created)
	}
	t.Logf("createTab: %v", time.Since(step).Round(time.Millisecond))

	var eval struct {
		Result struct{ Type, Value string } `json:"result"`
	}
	unmarshal(t, mustCall(t, rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})), &eval)
	if eval.Result.Type != "string" || eval.Result.Value != "Probe Page" {
		t.Fatalf("document.title: %+v", eval)
	}

	step = time.Now()
	var shot struct{ Data string }
	unmarshal(t, mustCall(t, rc, "forwardCDPCommand", cdp("Page.captureScreenshot", map[string]any{"format": "png"})), &shot)
	b, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil || format != "png" {
		t.Fatalf("screenshot: %q, %v", format, err)
	}
	t.Logf("screenshot: %d bytes, %v, in %v", len(b), img.Bounds().Size(), time.Since(step).Round(time.Millisecond))

	// Errors come back as {code, message}.
	wantCode(t, callErr(t, rc, "bogusMethod", nil), -32601, "Unknown command: bogusMethod")
	callErr(t, rc, "forwardCDPCommand", cdp("No.suchMethod", nil))

	// A relay restart: the extension dials again on its own.
	step = time.Now()
	r.Restart()
	if _, err := r.WaitExtension(testCtx(t), c.Name); err != nil {
		t.Fatalf("after restart: %v\n%s", err, c.Output())
	}
	t.Logf("reconnected after restart in %v", time.Since(step).Round(time.Millisecond))
	rc = handshakeMCP(t, r, "alice")
	mustCall(t, rc, "connect", map[string]any{"extension_id": c.ExtensionID})
	mustCall(t, rc, "selectTab", map[string]any{"tabIndex": 1})
	unmarshal(t, mustCall(t, rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})), &eval)
	if eval.Result.Value != "Probe Page" {
		t.Fatalf("after restart: %+v", eval)
	}

	// closeTab closes it.
	mustCall(t, rc, "closeTab", map[string]any{})
	var tabs struct{ Tabs []struct{ URL string } }
	unmarshal(t, mustCall(t, rc, "getTabs", nil), &tabs)
	for _, tab := range tabs.Tabs {
		if tab.URL == page.URL+"/" {
			t.Fatalf("tab still open: %+v", tabs)
		}
	}
}
