//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestDashboard drives the dashboard of a real `mcpx serve --http`, over
// two fixture servers, in headless Chromium: every page renders from the
// running serve; a tool tried from its form shows its result; the
// activity page shows a new call without a reload; a server is restarted
// from its button; a tool withheld since pinned is approved from the
// trust page, and then a connected MCP client gets list_changed and
// lists it; every request the browser made went to the serve itself;
// a POST from another site's page is refused.
func TestDashboard(t *testing.T) {
	state := t.TempDir()
	env := trustEnv(state, "")
	defs := filepath.Join(t.TempDir(), "defs.json")
	writeDefs(t, defs, map[string]any{})
	cfg := writeConfig(t, map[string]any{"expose": "both", "servers": map[string]any{
		"fx": fx("--name", "fx", "--defs", defs), "other": fx("--name", "other")}})
	if first := listedTools(t, env, cfg); !slices.Contains(first, "fx_echo") {
		t.Fatalf("first run (pinning fx): %q", first)
	}
	writeDefs(t, defs, changedDefs) // fx_newtool is new: withheld until approved

	srv := startHTTP(t, cfg, env)
	client := openRaw(t, srv.url+"/mcp")
	notes := client.listen()
	if tools := client.call(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); strings.Contains(tools, `"fx_newtool"`) {
		t.Fatalf("fx_newtool is listed before approval: %s", tools)
	}

	tab := openTab(t)
	ui := srv.url + "/ui"
	tab.open(ui+"/", "Servers")
	tab.waitText(`fx\s+ready`, "servers page")
	tab.waitText(`other\s+ready`, "servers page")
	if html := tab.html(); !strings.Contains(html, `data-server="fx"`) || !strings.Contains(html, "stdio") {
		t.Errorf("servers page lacks fx's row:\n%s", html)
	}
	tab.open(ui+"/tools?q=echo", "other_echo")
	tab.open(ui+"/numbers", "Mean latency")
	tab.open(ui+"/trust", "newtool")
	if text := tab.text(); !strings.Contains(text, "added tool newtool") || !strings.Contains(text, "changed tool echo") {
		t.Errorf("trust page lacks fx's changes:\n%s", text)
	}

	// Try a tool from its form: the script posts it and shows the result.
	tab.open(ui+"/tool?name=other_echo", "Try it")
	tab.eval(`document.querySelector('[name="arg.message"]').value = "hello from the page"; document.querySelector('form.try button[type=submit]').click(); true`)
	tab.waitText(`Result[\s\S]*hello from the page`, "after trying other_echo")

	// The activity page shows a call made meanwhile, without a reload.
	tab.open(ui+"/activity?server=other&tool=other_echo", "Activity")
	tab.waitText(`other\s+tools/call`, "activity page") // the call from the form
	tab.eval(`window.notReloaded = true`)
	rows := func() int {
		var n int
		json.Unmarshal(tab.eval(`document.querySelectorAll('#live tbody tr.outcome-ok').length`), &n)
		return n
	}
	before := rows()
	client.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"other_echo","arguments":{"message":"from a client"}}}`)
	testenv.Eventually(t, 30*time.Second, func() bool { return rows() > before }, "the activity page did not show the client's call (%d rows before)", before)
	if string(tab.eval(`window.notReloaded === true`)) != "true" {
		t.Errorf("the activity page reloaded to show a call")
	}
	tab.open(ui+"/numbers", "Mean latency")
	tab.waitText(`other\s+[1-9]`, "numbers page after calls to other")

	// Restart a server from its button.
	tab.open(ui+"/servers", "Servers")
	tab.eval(`document.querySelector('tr[data-server="other"] form[action="/ui/servers/restart"] button').click(); true`)
	tab.waitText("Restarting other", "after the restart button")
	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(srv.stderr.String(), "server restarted") },
		"serve did not log the restart:\n%s", srv.stderr)
	tab.waitText(`other\s+ready`, "servers page after the restart")

	// Approve fx's changes: a connected client is told and lists them.
	tab.open(ui+"/trust", "newtool")
	tab.eval(`document.querySelector('section[data-server="fx"] form[action="/ui/trust/approve"] button').click(); true`)
	tab.waitText("Approved the changes of fx", "after approving")
	until(t, "client", notes, "notifications/tools/list_changed")
	if tools := client.call(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); !strings.Contains(tools, `"fx_newtool"`) {
		t.Errorf("after approval from the page, tools/list lacks fx_newtool: %s", tools)
	}

	// Nothing the pages loaded came from elsewhere.
	own, _ := url.Parse(srv.url)
	for _, u := range tab.requested() {
		p, err := url.Parse(u)
		if err != nil || p.Host != own.Host && p.Scheme != "data" && p.Scheme != "about" {
			t.Errorf("the browser requested %s, not of the serve at %s", u, own.Host)
		}
	}
	if len(tab.requested()) < 10 {
		t.Errorf("only %d requests recorded: %q", len(tab.requested()), tab.requested())
	}

	// A form on another site's page posting to the dashboard is refused.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/servers/restart"><input name="server" value="fx"><input name="csrf" value="guess"><button>go</button></form>`, ui)
	}))
	defer evil.Close()
	restarts := strings.Count(srv.stderr.String(), "server restarted")
	tab.open(evil.URL, "go")
	tab.eval(`document.querySelector('button').click(); true`)
	tab.waitText("forbidden", "after the cross-site POST")
	if n := strings.Count(srv.stderr.String(), "server restarted"); n != restarts {
		t.Errorf("the cross-site POST restarted a server")
	}
}

// TestDashboardOff: with http.ui false there is no dashboard.
func TestDashboardOff(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"http": map[string]any{"ui": false}, "servers": map[string]any{}})
	srv := startHTTP(t, cfg, nil)
	if code, _, body := do(t, "GET", srv.url+"/ui/", nil, ""); code != http.StatusNotFound {
		t.Errorf("GET /ui/ with http.ui false: %d %s, want 404", code, body)
	}
}

// TestDashboardLogin: with a token set, a browser is sent to the login
// page, logs in with the token, and then sees the dashboard; the cookie
// it got is HttpOnly (no script reads it) and is not the token.
func TestDashboardLogin(t *testing.T) {
	token := "dashboard-test-token-0123456789"
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})
	srv := startHTTP(t, cfg, nil, "--token-file", writeTemp(t, token))
	tab := openTab(t)
	tab.open(srv.url+"/ui/", "Token or API key")
	if u := string(tab.eval(`location.pathname`)); u != `"/ui/login"` {
		t.Errorf("without a login the dashboard is at %s, want /ui/login", u)
	}
	tab.eval(`document.querySelector('[name="token"]').value = "wrong"; document.querySelector('form button').click(); true`)
	tab.waitText("not accepted", "after a wrong token")
	tab.eval(fmt.Sprintf(`document.querySelector('[name="token"]').value = %q; document.querySelector('form button').click(); true`, token))
	tab.waitText(`fx\s+ready`, "after logging in")
	if c := string(tab.eval(`document.cookie`)); c != `""` {
		t.Errorf("script reads the cookie %s: want it HttpOnly", c)
	}
	if html := tab.html(); strings.Contains(html, token) {
		t.Errorf("the page shows the token")
	}
	if _, _, body := do(t, "GET", srv.url+"/ui/servers", nil, ""); !strings.Contains(body, `name="token"`) || strings.Contains(body, "fx") {
		t.Errorf("GET /ui/servers without the cookie did not end at the login page:\n%s", body)
	}
}
