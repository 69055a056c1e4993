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

// treePage is an expanded tree whose parent item's box holds its
// children: the centre of "src" lies on "util.go". "Full" is an item its
// own button covers entirely. The page records which item (or button)
// each click reached.
const treePage = `<!doctype html><html><head><title>Tree</title><style>
body { margin: 0; font: 16px/20px sans-serif; }
ul { list-style: none; margin: 0; padding: 0 0 0 20px; }
</style></head><body>
<ul role="tree" aria-label="Files">
  <li role="treeitem" id="src" aria-expanded="true" tabindex="0">src
    <ul role="group">
      <li role="treeitem" id="main" tabindex="-1">main.go</li>
      <li role="treeitem" id="util" tabindex="-1">util.go</li>
      <li role="treeitem" id="more" tabindex="-1">more.go</li>
    </ul>
  </li>
  <li role="treeitem" id="docs" aria-expanded="false" tabindex="-1">docs</li>
</ul>
<div role="treeitem" id="full" aria-label="Full" tabindex="-1" style="width: 120px"><button id="inner" style="display: block; width: 120px; height: 40px; margin: 0">Inner</button></div>
<script>
window.got = [];
document.addEventListener("click", (e) => { const t = e.target.closest("[role=treeitem], button"); got.push(t ? t.id : e.target.localName); });
</script></body></html>`

// TestClickTreeItems clicks each item of an expanded tree by its
// snapshot ref, on headless Chromium: each click reaches the item itself
// (its own row), not a child whose box lies under the parent's centre.
// An item its own button covers entirely is clicked at its centre, and
// the result says that the click lies on the button.
func TestClickTreeItems(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, treePage)
	}))
	defer srv.Close()
	relay := browsertest.NewRelay(nil)
	defer relay.Close()
	token := relay.Token("user-1", time.Hour)
	chrome := browsertest.StartChromium(t, relay.ExtensionURL(), token)
	c := browser.NewClient(browser.Options{Token: token})
	c.Start(context.Background())
	defer c.Close()
	tools := browser.NewTools(c, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	call := func(name string, args any) string {
		t.Helper()
		b, _ := json.Marshal(args)
		var r struct {
			Content []struct{ Text string }
			IsError bool
		}
		raw := tools.Call(ctx, name, b)
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 || r.IsError {
			t.Fatalf("%s %s: %s\nchromium:\n%s", name, b, raw, chrome.Output())
		}
		return r.Content[len(r.Content)-1].Text
	}
	clicked := func() string {
		t.Helper()
		raw, err := c.Eval(ctx, `got.splice(0).join(",")`)
		if err != nil {
			t.Fatal(err)
		}
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}

	call("tabs", map[string]any{"action": "new", "url": srv.URL})
	snap := call("snapshot", map[string]any{})
	refs := map[string]string{}
	for _, l := range parseOutline(snap) {
		if l.role == "treeitem" && l.ref != "" {
			refs[l.name] = l.ref
		}
	}
	for name, id := range map[string]string{"src": "src", "main.go": "main", "util.go": "util", "more.go": "more", "docs": "docs"} {
		ref := refs[name]
		if ref == "" {
			t.Fatalf("no treeitem %q with a ref in:\n%s", name, snap)
		}
		text := call("click", map[string]any{"ref": ref})
		if got := clicked(); got != id {
			t.Errorf("click treeitem %q (%s): the click reached %q; want %q", name, ref, got, id)
		}
		if strings.Contains(text, "lies on") {
			t.Errorf("click treeitem %q: %q; want no note, the item has a point of its own", name, text)
		}
	}

	ref := refs["Full"]
	if ref == "" {
		t.Fatalf("no treeitem \"Full\" with a ref in:\n%s", snap)
	}
	text := call("click", map[string]any{"ref": ref})
	if got := clicked(); got != "inner" || !strings.Contains(text, `lies on button "Inner"`) {
		t.Errorf("click the covered item: result %q, the click reached %q; want its centre, on the button, and a result that says so", text, got)
	}
}
