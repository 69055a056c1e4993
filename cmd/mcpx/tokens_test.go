package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestProxyTokensSaved: serve --http counts what the proxy saved its
// clients against listing every tool, in /metrics and on the dashboard's
// numbers page: a tools/list through the proxy counts the full listing
// as listed and its own size as served, a proxy answer counts as served.
func TestProxyTokensSaved(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"expose": "proxy", "servers": map[string]any{"a": fx(), "b": fx()}})
	srv := startHTTP(t, cfg, nil)
	url := srv.url + "/mcp"
	meta := `{"_meta":` + modernMeta(`{}`) + `}`
	counts := func() (listed, served int) {
		t.Helper()
		_, _, body := do(t, "GET", srv.url+"/metrics", nil, "")
		for _, m := range regexp.MustCompile(`(?m)^mcpx_proxy_tokens_total\{[^}]*mcpx_tokens="(\w+)"[^}]*\} (\d+)`).FindAllStringSubmatch(body, -1) {
			n, _ := strconv.Atoi(m[2])
			switch m[1] {
			case "listed":
				listed += n
			case "served":
				served += n
			}
		}
		return listed, served
	}
	if l, s := counts(); l != 0 || s != 0 {
		t.Fatalf("before any client: %d listed, %d served", l, s)
	}
	r := post(t, url, "tools/list", "", meta, nil)
	if r.status != 200 {
		t.Fatalf("tools/list: HTTP %d", r.status)
	}
	// A listing before the servers are up is counted once they are,
	// against the catalog they make.
	var listed, served int
	testenv.Eventually(t, 30*time.Second, func() bool { listed, served = counts(); return listed > 0 }, "the listing was never counted")
	if listed <= served || served == 0 {
		t.Fatalf("after a tools/list through the proxy: %d listed, %d served; want the full listing above the proxy's", listed, served)
	}
	// The full listing is what mcpx list counts for the same catalog.
	out, _, code := runPinned(t, nil, "list", "tools", "--json", "--config", cfg)
	if code != 0 || listed < len(out)/8 {
		t.Errorf("listed %d tokens, for a catalog whose JSON is %d bytes", listed, len(out))
	}
	call := `{"name":"proxy","arguments":{"action":"list","type":"tool"},"_meta":` + modernMeta(`{}`) + `}`
	if r := post(t, url, "tools/call", "proxy", call, nil); r.status != 200 || r.Error != nil {
		t.Fatalf("proxy list: HTTP %d %+v", r.status, r.Error)
	}
	l2, s2 := counts()
	if l2 != listed || s2 <= served {
		t.Errorf("after a proxy answer: %d listed, %d served; want %d listed and more served than %d", l2, s2, listed, served)
	}
	_, _, page := do(t, "GET", srv.url+"/ui/numbers", nil, "")
	if want := fmt.Sprintf("Tokens saved through <code>proxy</code>: %d ", l2-s2); !strings.Contains(page, want) {
		t.Errorf("the numbers page does not say %q:\n%s", want, page)
	}
}
