package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser/browsertest"
)

const testPage = `<!doctype html>
<html><head><title>mcpx test page</title></head>
<body>
  <h1>Greeter</h1>
  <label for="name">Your name</label>
  <input id="name" type="text" placeholder="name">
  <button id="go" onclick="document.getElementById('out').textContent = 'Hello, ' + document.getElementById('name').value + '!'">Greet</button>
  <div id="out">nobody yet</div>
  <select id="color"><option value="r">Red</option><option value="g">Green</option></select>
  <span id="hoverme" onmouseover="this.textContent = 'hovered'">hover me</span>
  <input id="keys" onkeydown="if (event.key === 'Enter') this.dataset.entered = this.value">
</body></html>`

// TestBrowserEndToEnd drives real headless Chromium, through the test
// relay and the MV3 test extension, with the browser tools served by
// `mcpx serve --stdio`: open a tab on a local page, snapshot, type into the
// input by ref, click the button by ref, read the result, screenshot.
func TestBrowserEndToEnd(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, testPage)
	}))
	defer page.Close()
	relay := browsertest.NewRelay(nil)
	defer relay.Close()
	token := relay.Token("user-1", time.Hour)
	chrome := browsertest.StartChromium(t, relay.ExtensionURL(), token)
	defer chrome.Close()

	cfg := writeConfig(t, map[string]any{"browser": map[string]any{"token": token}})
	c := startServe(t, cfg)
	c.initialize()
	list, _ := c.request("tools/list", map[string]any{})
	for _, want := range []string{`"proxy"`, `"browser_navigate"`, `"browser_snapshot"`, `"browser_click"`} {
		if !strings.Contains(string(list), want) {
			t.Fatalf("tools/list lacks %s", want)
		}
	}
	call := func(name string, args any) string {
		t.Helper()
		raw, e := c.request("tools/call", map[string]any{"name": name, "arguments": args})
		if e != nil {
			t.Fatalf("%s: JSON-RPC error %s", name, e.Message)
		}
		var r struct {
			Content []struct{ Type, Text, Data, MimeType string }
			IsError bool
		}
		json.Unmarshal(raw, &r)
		if r.IsError {
			t.Fatalf("%s: %s\nchromium:\n%s", name, r.Content[0].Text, chrome.Output())
		}
		if r.Content[0].Type == "image" {
			return r.Content[0].MimeType + ";" + r.Content[0].Data
		}
		return r.Content[0].Text
	}

	// The first browser call: navigate opens its tab at its URL (the test
	// extension, as Blueprint v1.5, refuses to automate about:blank).
	if got := call("browser_navigate", map[string]any{"url": page.URL + "/other"}); !strings.Contains(got, "mcpx test page") {
		t.Errorf("navigate: %s", got)
	}
	// Chromium's own blank tab, and the page's.
	tabsNow := call("browser_tabs", map[string]any{"action": "list"})
	if lines := strings.Split(tabsNow, "\n"); len(lines) != 2 || strings.Count(tabsNow, "(about:blank)") != 1 || !strings.Contains(tabsNow, page.URL+"/other") {
		t.Errorf("tabs after the first navigate:\n%s\nwant Chromium's blank one and the page's", tabsNow)
	}
	if text, isErr := toolCall(c, "browser_tabs", map[string]any{"action": "new"}); !isErr || !strings.Contains(text, "Cannot automate tab with URL: about:blank") {
		t.Errorf("tabs new without a URL: %s", text)
	}
	if got := call("browser_tabs", map[string]any{"action": "list"}); got != tabsNow {
		t.Errorf("the refused blank tab was left:\n%s\nwant:\n%s", got, tabsNow)
	}
	call("browser_navigate", map[string]any{"url": page.URL})
	call("browser_navigate_back", map[string]any{})
	if got := call("browser_evaluate", map[string]any{"function": "() => location.pathname"}); got != `"/other"` {
		t.Errorf("after navigate_back the page is %s, want /other", got)
	}
	call("browser_navigate_forward", map[string]any{})
	snap := call("browser_snapshot", map[string]any{})
	if !strings.Contains(snap, `heading "Greeter"`) || !strings.Contains(snap, "mcpx test page") {
		t.Fatalf("snapshot:\n%s", snap)
	}
	input := refOf(t, snap, `textbox "Your name"`)
	button := refOf(t, snap, `button "Greet"`)
	call("browser_type", map[string]any{"ref": input, "text": "Ada"})
	call("browser_click", map[string]any{"ref": button})
	if got := call("browser_evaluate", map[string]any{"function": "() => document.getElementById('out').textContent"}); got != `"Hello, Ada!"` {
		t.Errorf("after typing and clicking, the page says %s", got)
	}
	call("browser_wait_for", map[string]any{"text": "Hello, Ada!"})
	call("browser_select_option", map[string]any{"selector": "#color", "values": []string{"Green"}})
	call("browser_hover", map[string]any{"selector": "#hoverme"})
	call("browser_type", map[string]any{"selector": "#keys", "text": "typed", "submit": true})
	if got := call("browser_evaluate", map[string]any{"function": "() => [color.value, hoverme.textContent, keys.dataset.entered].join()"}); got != `"g,hovered,typed"` {
		t.Errorf("select, hover, type+Enter left the page at %s", got)
	}
	snap2 := call("browser_snapshot", map[string]any{})
	if !strings.Contains(snap2, "Hello, Ada!") || refOf(t, snap2, `button "Greet"`) != button {
		t.Errorf("second snapshot: result missing or refs not stable:\n%s", snap2)
	}
	if r, _ := c.request("tools/call", map[string]any{"name": "browser_click", "arguments": map[string]any{"ref": "e999"}}); !strings.Contains(string(r), "take a new snapshot") {
		t.Errorf("an unknown ref: %s", r)
	}

	// The debugger's infobar can appear a moment after the tab is
	// attached and shrink the viewport; take the screenshot again if the
	// viewport changed in between.
	var vp struct{ W, H int }
	var img image.Config
	for attempt := 0; ; attempt++ {
		shot := call("browser_take_screenshot", map[string]any{})
		json.Unmarshal([]byte(call("browser_evaluate", map[string]any{"function": "() => ({W: innerWidth, H: innerHeight})"})), &vp)
		mime, data, _ := strings.Cut(shot, ";")
		var err error
		img, err = png.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
		if mime != "image/png" || err != nil {
			t.Fatalf("screenshot: %s %v", mime, err)
		}
		if img.Width == vp.W && img.Height == vp.H || attempt == 4 {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if img.Width != vp.W || img.Height != vp.H {
		t.Errorf("screenshot %dx%d, viewport %dx%d", img.Width, img.Height, vp.W, vp.H)
	}

	// The same tools through the proxy.
	r := c.proxyCall(t, `{"action":"call","type":"tool","path":"browser_evaluate","args":{"function":"() => document.title"}}`)
	if !strings.Contains(r, "mcpx test page") {
		t.Errorf("through the proxy: %s", r)
	}
}

func refOf(t *testing.T, snapshot, line string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(line) + `[^\n]*\[ref=(e\d+)\]`).FindStringSubmatch(snapshot)
	if m == nil {
		t.Fatalf("no %s with a ref in:\n%s", line, snapshot)
	}
	return m[1]
}

func (c *rawClient) proxyCall(t *testing.T, args string) string {
	t.Helper()
	raw, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": json.RawMessage(args)})
	if e != nil {
		t.Fatalf("proxy: %s", e.Message)
	}
	return string(raw)
}

// TestServersShowsBrowser: `mcpx servers` reports the relay, the
// connected extension and its name; with the relay down, the reason.
func TestServersShowsBrowser(t *testing.T) {
	relay := browsertest.NewRelay(nil)
	defer relay.Close()
	token := relay.Token("user-1", time.Hour)
	ext := browsertest.NewExtension(browsertest.V19, "Chrome 141")
	defer ext.Close()
	if err := ext.Connect(t.Context(), relay.ExtensionURL(), token); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]any{"browser": map[string]any{"token": token}, "servers": map[string]any{"fx": fx()}})
	out, errOut, code := runCLI(t, "", "servers", "--json", "--config", cfg)
	var got struct {
		Servers []serverJSON
		Browser browserJSON
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if b := got.Browser; b.State != "connected" || !b.RelayReachable || b.Extension != "Chrome 141" || b.Tools < 10 {
		t.Errorf("browser = %+v", b)
	}
	if len(got.Servers) != 1 || got.Servers[0].State != "ready" {
		t.Errorf("servers = %+v", got.Servers)
	}
	if strings.Contains(out+errOut, token) {
		t.Error("the token leaked")
	}

	relay.Close()
	out, _, _ = runCLI(t, "", "servers", "--json", "--config", cfg)
	json.Unmarshal([]byte(out), &got)
	if b := got.Browser; b.State != "failed" || b.RelayReachable || b.Error == "" {
		t.Errorf("with the relay down: %+v", b)
	}
	out, _, _ = runCLI(t, "", "list", "tools", "--config", cfg)
	if !strings.Contains(out, "browser_navigate\tbrowser\t") {
		t.Errorf("list tools lacks the browser tools:\n%s", out)
	}
}
