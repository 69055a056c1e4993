package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/trust"
	"github.com/mcpx/mcpx/upstream"
)

// fakeCatalog shows fixed servers and tools.
type fakeCatalog struct {
	servers []upstream.Status
	cat     *aggregator.Catalog
}

func (f *fakeCatalog) Servers() []upstream.Status   { return f.servers }
func (f *fakeCatalog) Catalog() *aggregator.Catalog { return f.cat }
func (f *fakeCatalog) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("no calls here")
}

// fakeControl records the changes asked of it.
type fakeControl struct {
	mu   sync.Mutex
	done []string
}

func (c *fakeControl) record(s string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, s)
	return nil
}
func (c *fakeControl) Restart(server string) error { return c.record("restart " + server) }
func (c *fakeControl) SetEnabled(server string, on bool) error {
	return c.record(fmt.Sprintf("enabled %s %v", server, on))
}
func (c *fakeControl) Approve(r *trust.Review) error { return c.record("approve " + r.Server) }

func (c *fakeControl) changes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.done...)
}

// newTest is a dashboard over servers a and b, whose profile "only-a"
// shows a alone, with n tools on a.
func newTest(t *testing.T, n int) (*Dashboard, *fakeControl) {
	t.Helper()
	var tools []*aggregator.Entry
	for i := range n {
		name := fmt.Sprintf("a_tool_%d", i)
		tools = append(tools, &aggregator.Entry{Kind: aggregator.KindTool, Name: name, Original: name[2:], Server: "a",
			Description: strings.Repeat("Does a thing with files and folders. ", 6),
			JSON:        json.RawMessage(`{"name":"` + name + `","inputSchema":{"type":"object"}}`)})
	}
	a := upstream.Status{Name: "a", State: upstream.StateConnected, Transport: "stdio", ProtocolVersion: "2025-06-18", Tools: n}
	b := upstream.Status{Name: "b", State: upstream.StateFailed, Transport: "http", Err: "connection refused"}
	whole := &fakeCatalog{servers: []upstream.Status{a, b}, cat: &aggregator.Catalog{Tools: tools}}
	onlyA := &fakeCatalog{servers: []upstream.Status{a}, cat: &aggregator.Catalog{Tools: tools}}
	ctl := &fakeControl{}
	d, err := New(&Options{Control: ctl, View: func(p string) Catalog {
		switch p {
		case "":
			return whole
		case "only-a":
			return onlyA
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d, ctl
}

func get(t *testing.T, h http.Handler, path string, ctx context.Context, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:7777"+path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestCSRF: a change is made only by a POST from the dashboard's own
// origin that carries the token rendered into its page; a cross-site
// POST, one without the token or with another's, and a GET are refused
// and change nothing.
func TestCSRF(t *testing.T) {
	d, ctl := newTest(t, 1)
	page := get(t, d, "/ui/servers", context.Background(), nil)
	m := csrfInput.FindStringSubmatch(page.Body.String())
	if page.Code != 200 || m == nil {
		t.Fatalf("servers page: %d, no CSRF token in\n%s", page.Code, page.Body)
	}
	token := m[1]
	other := principal.With(context.Background(), "mallory")
	for _, c := range []struct {
		name   string
		method string
		ctx    context.Context
		form   url.Values
		hdr    map[string]string
		want   int
	}{
		{"cross-site Origin", "POST", context.Background(), url.Values{"csrf": {token}, "server": {"a"}}, map[string]string{"Origin": "http://evil.example"}, 403},
		{"cross-site fetch", "POST", context.Background(), url.Values{"csrf": {token}, "server": {"a"}}, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same-site fetch", "POST", context.Background(), url.Values{"csrf": {token}, "server": {"a"}}, map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"no token", "POST", context.Background(), url.Values{"server": {"a"}}, map[string]string{"Origin": "http://127.0.0.1:7777"}, 403},
		{"another principal's token", "POST", other, url.Values{"csrf": {token}, "server": {"a"}}, nil, 403},
		{"a GET", "GET", context.Background(), nil, nil, 405},
		{"own page", "POST", context.Background(), url.Values{"csrf": {token}, "server": {"a"}}, map[string]string{"Origin": "http://127.0.0.1:7777", "Sec-Fetch-Site": "same-origin"}, 303},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(ctl.changes())
			r := httptest.NewRequestWithContext(c.ctx, c.method, "http://127.0.0.1:7777/ui/servers/restart", strings.NewReader(c.form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range c.hdr {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			d.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Fatalf("%d, want %d: %s", w.Code, c.want, w.Body)
			}
			if changed := len(ctl.changes()) > before; changed != (c.want == 303) {
				t.Errorf("changes %q after a %d", ctl.changes(), w.Code)
			}
		})
	}
	if got := ctl.changes(); len(got) != 1 || got[0] != "restart a" {
		t.Errorf("changes %q, want one restart of a", got)
	}
}

// TestFirstPageSmall: the first page, with a thousand tools in the
// catalog and no compression asked for, stays under 150 KB with the
// script and style it loads; its answer carries the strict CSP.
func TestFirstPageSmall(t *testing.T) {
	d, _ := newTest(t, 1000)
	total := 0
	for _, p := range []string{"/ui/", "/ui/static/app.js", "/ui/static/app.css"} {
		w := get(t, d, p, context.Background(), nil)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d", p, w.Code)
		}
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q", p, csp)
		}
		total += w.Body.Len()
	}
	tools := get(t, d, "/ui/tools", context.Background(), nil)
	if total > 150<<10 || tools.Body.Len() > 150<<10 {
		t.Errorf("first page with its files: %d bytes; tools page %d bytes; want at most 150 KB", total, tools.Body.Len())
	}
	if !strings.Contains(tools.Body.String(), "900 more") {
		t.Errorf("the tools page does not say it listed only the first hundred")
	}
	if inline := regexp.MustCompile(`<script>|<script [^>]*>[^<]|\son[a-z]+="`); inline.MatchString(get(t, d, "/ui/", context.Background(), nil).Body.String()) {
		t.Errorf("the first page has inline script, which the CSP forbids")
	}
}

// TestProfileView: a request limited to a profile sees that profile's
// servers only, and cannot change another's; an unknown profile is
// refused.
func TestProfileView(t *testing.T) {
	d, ctl := newTest(t, 1)
	whole := get(t, d, "/ui/servers", context.Background(), nil).Body.String()
	if !strings.Contains(whole, `data-server="b"`) || !strings.Contains(whole, "connection refused") {
		t.Fatalf("the whole catalog's servers page lacks b:\n%s", whole)
	}
	ctx := principal.WithProfile(principal.With(context.Background(), "alice"), "only-a")
	w := get(t, d, "/ui/servers", ctx, nil)
	if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `data-server="a"`) || strings.Contains(body, `data-server="b"`) || !strings.Contains(body, "profile only-a") {
		t.Fatalf("only-a's servers page: %d\n%s", w.Code, body)
	}
	token := csrfInput.FindStringSubmatch(w.Body.String())[1]
	r := httptest.NewRequestWithContext(ctx, "POST", "http://127.0.0.1:7777/ui/servers/disable", strings.NewReader(url.Values{"csrf": {token}, "server": {"b"}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, r)
	if rec.Code != 404 || len(ctl.changes()) > 0 {
		t.Errorf("only-a disabling b: %d, changes %q; want 404 and none", rec.Code, ctl.changes())
	}
	if w := get(t, d, "/ui/servers", principal.WithProfile(context.Background(), "gone"), nil); w.Code != 403 {
		t.Errorf("an unknown profile: %d, want 403", w.Code)
	}
}

// TestLiveParts: the script refreshes a page from its live part alone.
func TestLiveParts(t *testing.T) {
	d, _ := newTest(t, 1)
	for _, p := range []string{"/ui/servers", "/ui/activity", "/ui/numbers", "/ui/trust"} {
		w := get(t, d, p+"?part=live", context.Background(), map[string]string{"Accept-Encoding": "gzip"})
		body, _ := io.ReadAll(w.Body)
		if w.Code != 200 || strings.Contains(string(body), "<html") {
			t.Errorf("%s?part=live: %d, a whole page or nothing:\n%s", p, w.Code, body)
		}
	}
}

// TestFormFields: a form's inputs follow the schema's types, through a
// local $ref and past a null alternative; the arguments are sent as
// those types, an optional empty field not at all.
func TestFormFields(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","$defs":{"text":{"type":"string","description":"Text."}},
		"properties":{"message":{"$ref":"#/$defs/text"},"repeat":{"anyOf":[{"type":"integer"},{"type":"null"}]},
		"loud":{"type":["boolean","null"]},"mode":{"type":"string","enum":["a","b"]},"ratio":{"type":"number"},
		"tags":{"type":"array","items":{"type":"string"}}},"required":["message"]}`)
	fields := formFields(schema)
	var got []string
	for _, f := range fields {
		got = append(got, f.Name+":"+f.Kind)
	}
	if want := "message:string loud:boolean mode:enum ratio:number repeat:integer tags:json"; strings.Join(got, " ") != want {
		t.Fatalf("fields %q, want %q", got, want)
	}
	values := map[string]string{"message": "hi", "repeat": "2", "loud": "true", "mode": "", "ratio": "0.5", "tags": `["x"]`}
	for i := range fields {
		fields[i].Value = values[fields[i].Name]
	}
	args, err := arguments(fields, "")
	if err != nil || string(args) != `{"loud":true,"message":"hi","ratio":0.5,"repeat":2,"tags":["x"]}` {
		t.Errorf("arguments: %s %v", args, err)
	}
	fields[4].Value = "two"
	if _, err := arguments(fields, ""); err == nil || !strings.Contains(err.Error(), "repeat") {
		t.Errorf("a bad integer: %v", err)
	}
	if args, err := arguments(fields, `{"message":"raw"}`); err != nil || string(args) != `{"message":"raw"}` {
		t.Errorf("raw arguments: %s %v", args, err)
	}
}

// TestActivity: the activity page shows the trail's lines filtered by
// server, tool and principal (an exposed tool name: TestDashboard in
// cmd/mcpx, over a real catalog), and a
// profile's view only the calls to its servers.
func TestActivity(t *testing.T) {
	d, _ := newTest(t, 1)
	d.o.AuditPath = filepath.Join(t.TempDir(), "audit.jsonl")
	trail := `{"server":"a","method":"tools/call","tool":"tool_0","principal":"alice","outcome":"ok"}
{"server":"b","method":"tools/call","tool":"secret_b_tool","principal":"ci","outcome":"error"}
{"server":"a","method":"tools/call","tool":"other","principal":"ci","outcome":"ok"}
`
	if err := os.WriteFile(d.o.AuditPath, []byte(trail), 0o600); err != nil {
		t.Fatal(err)
	}
	rows := func(ctx context.Context, query string) int {
		t.Helper()
		body := get(t, d, "/ui/activity?part=live&"+query, ctx, nil).Body.String()
		return strings.Count(body, "<tr class=\"outcome-")
	}
	bg := context.Background()
	for q, want := range map[string]int{"": 3, "server=b": 1, "principal=ci": 2, "tool=tool_0": 1, "tool=nothing": 0} {
		if got := rows(bg, q); got != want {
			t.Errorf("activity?%s: %d rows, want %d", q, got, want)
		}
	}
	onlyA := principal.WithProfile(bg, "only-a")
	if got := rows(onlyA, ""); got != 2 {
		t.Errorf("profile only-a: %d rows, want a's 2", got)
	}
	if body := get(t, d, "/ui/activity", onlyA, nil).Body.String(); strings.Contains(body, "secret_b_tool") {
		t.Errorf("profile only-a sees a call to b")
	}
}
