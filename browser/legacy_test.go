package browser_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/internal/testenv"
)

// The relay client against a relay of the legacy protocol
// (browsertest.LegacyRelay): plain JSON, no ids, routing by connectionId.

// newLegacy starts a legacy relay and a client of it, whose logs go to
// the returned buffer.
func newLegacy(t *testing.T) (*browsertest.LegacyRelay, *browser.Client, *testenv.Buffer) {
	t.Helper()
	r := browsertest.NewLegacyRelay()
	t.Cleanup(r.Close)
	logs := &testenv.Buffer{}
	c := browser.NewClient(browser.Options{URL: r.MCPURL(), Logger: slog.New(log.New(logs)), MinBackoff: 20 * time.Millisecond})
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	return r, c, logs
}

func legacyCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// legacySent is a frame the client sent, as the relay received it.
type legacySent struct {
	ID           json.RawMessage `json:"id"`
	Method       string          `json:"method"`
	Params       json.RawMessage `json:"params"`
	ConnectionID string          `json:"connectionId"`
}

func sentFrames(t *testing.T, r *browsertest.LegacyRelay) []legacySent {
	t.Helper()
	var out []legacySent
	for _, f := range r.Frames() {
		var m legacySent
		if err := json.Unmarshal(f.Data, &m); err != nil {
			t.Fatalf("frame %s: %v", f.Data, err)
		}
		out = append(out, m)
	}
	return out
}

// evalJSON evaluates expr and returns the value's JSON text.
func evalJSON(t *testing.T, c *browser.Client, expr string) string {
	t.Helper()
	v, err := c.Eval(legacyCtx(t), expr)
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	return string(v)
}

// The client recognises a legacy relay from its handshake (no answer to
// mcp_handshake, an id-less list), and then speaks it: connect with
// extensionId, connectionId on every forwarded message.
func TestLegacyRelaySession(t *testing.T) {
	r, c, logs := newLegacy(t)
	ctx := legacyCtx(t)
	exts, err := c.ListExtensions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(exts) != 1 || exts[0].ID != r.ExtensionID() || exts[0].Name != "Chrome 141" || !exts[0].Connected {
		t.Fatalf("extensions %+v", exts)
	}
	if !strings.Contains(logs.String(), `protocol=legacy`) {
		t.Fatalf("the client did not log a legacy relay:\n%s", logs.String())
	}

	res, err := c.Call(ctx, "getTabs", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var tabs struct {
		Tabs []struct {
			ID    int    `json:"id"`
			Title string `json:"title"`
			URL   string `json:"url"`
		} `json:"tabs"`
	}
	if err := json.Unmarshal(res, &tabs); err != nil {
		t.Fatalf("getTabs: %s", res)
	}
	// the relay's three tabs, and the one connect made
	if len(tabs.Tabs) != 4 || tabs.Tabs[1].Title != "Example Domain" || tabs.Tabs[2].URL != "http://docs.test/" {
		t.Fatalf("getTabs: %s", res)
	}
	if st := c.Status(); !st.Reachable || st.Extension != "Chrome 141" {
		t.Fatalf("status %+v", st)
	}

	tab, err := c.CreateTab(ctx, "http://example.test/", true)
	if err != nil {
		t.Fatal(err)
	}
	if string(tab.ID) != "5" || tab.URL != "http://example.test/" {
		t.Fatalf("createTab: %+v", tab)
	}
	if got := evalJSON(t, c, "document.title"); got != `"Example Domain"` {
		t.Fatalf("document.title = %s", got)
	}
	if got := evalJSON(t, c, "42"); got != "42" {
		t.Fatalf("42 = %s", got)
	}
	// An error string is an error with its words, and the session goes on.
	if _, err := c.CDP(ctx, "Nope.nope", nil); err == nil || !strings.Contains(err.Error(), "wasn't found") || errors.Is(err, browser.ErrExtensionDisconnected) {
		t.Fatalf("unknown CDP method: %v", err)
	}
	if got := evalJSON(t, c, "location.href"); got != `"http://example.test/"` {
		t.Fatalf("location.href = %s", got)
	}

	conns := r.Connections()
	if len(conns) != 1 {
		t.Fatalf("connections %q", conns)
	}
	frames := sentFrames(t, r)
	var methods []string
	for i, f := range frames {
		methods = append(methods, f.Method)
		switch f.Method {
		case "mcp_handshake":
			var p struct {
				ProjectName string `json:"projectName"`
			}
			_ = json.Unmarshal(f.Params, &p)
			if i != 0 || p.ProjectName == "" {
				t.Errorf("handshake %d: %s", i, f.Params)
			}
		case "connect":
			var p struct {
				ExtensionID string `json:"extensionId"`
			}
			_ = json.Unmarshal(f.Params, &p)
			if p.ExtensionID != r.ExtensionID() {
				t.Errorf("connect without extensionId: %s", f.Params)
			}
		case "list_extensions":
		default:
			if f.ConnectionID != conns[0] {
				t.Errorf("%s without the connection's id: %+v", f.Method, f)
			}
		}
	}
	if !slices.Contains(methods, "connect") || !slices.Contains(methods, "forwardCDPCommand") {
		t.Fatalf("the client sent %q", methods)
	}
}

// Answers without ids can only be matched in order: concurrent calls must
// each get their own.
func TestLegacyConcurrentCalls(t *testing.T) {
	_, c, _ := newLegacy(t)
	if _, err := c.CreateTab(legacyCtx(t), "about:blank", true); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]string, 12)
	errs := make([]error, 12)
	for i := range got {
		wg.Go(func() {
			v, err := c.Eval(legacyCtx(t), fmt.Sprint(i*7))
			got[i], errs[i] = string(v), err
		})
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != fmt.Sprint(i*7) {
			t.Errorf("call %d: %s, %v; want %d", i, got[i], errs[i], i*7)
		}
	}
}

// The extension dropping: the call in flight fails at once with
// ErrExtensionDisconnected, and the next call connects again and takes
// back the tab the client worked in.
func TestLegacyDropExtensionInFlight(t *testing.T) {
	r, c, _ := newLegacy(t)
	ctx := legacyCtx(t)
	if _, err := c.CreateTab(ctx, "http://docs.test/", true); err != nil {
		t.Fatal(err)
	}
	first := r.Connections()
	held := make(chan struct{}, 1)
	r.Extension().Handle("forwardCDPCommand:Runtime.evaluate", func(ctx context.Context, _ json.RawMessage) (any, error) {
		held <- struct{}{}
		<-ctx.Done()
		return nil, browsertest.ErrNoResponse
	})
	done := make(chan error, 1)
	go func() {
		_, err := c.Eval(ctx, "document.title")
		done <- err
	}()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the call never reached the extension")
	}
	r.DropExtension()
	select {
	case err := <-done:
		if !errors.Is(err, browser.ErrExtensionDisconnected) || !strings.Contains(err.Error(), "Extension disconnected") {
			t.Fatalf("the call in flight: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the call in flight hung after the extension dropped")
	}
	r.Extension().Handle("forwardCDPCommand:Runtime.evaluate", nil)

	if got := evalJSON(t, c, "document.title"); got != `"Docs"` {
		t.Fatalf("after reconnecting, document.title = %s: not the tab the client worked in", got)
	}
	now := r.Connections()
	if len(now) != 1 || now[0] == first[0] {
		t.Fatalf("connections %q, then %q: want one new one", first, now)
	}
	// The relay's 3, the first connect's, createTab's, the second
	// connect's (the legacy connect without tabId makes one): the client
	// took back its tab rather than creating another.
	if n := len(r.Extension().Tabs()); n != 6 {
		t.Fatalf("%d tabs after reconnecting", n)
	}
}

// The extension dropping while the client is idle: the next call just
// connects again.
func TestLegacyDropExtensionIdle(t *testing.T) {
	r, c, _ := newLegacy(t)
	ctx := legacyCtx(t)
	if _, err := c.Call(ctx, "getTabs", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	first := r.Connections()
	r.DropExtension()
	// The drop's notice arrives on its own.
	testenv.Eventually(t, 5*time.Second, func() bool { return c.Status().Extension == "" },
		"the client never noticed the drop")
	if _, err := c.Call(ctx, "getTabs", map[string]any{}); err != nil {
		t.Fatalf("the call after the drop: %v", err)
	}
	if now := r.Connections(); len(now) != 1 || now[0] == first[0] {
		t.Fatalf("connections %q, then %q", first, now)
	}

	// Gone for good: a clear error, not a hang.
	r.SetExtensionAvailable(false)
	testenv.Eventually(t, 10*time.Second, func() bool { return c.Status().Extension == "" },
		"the client still lists the extension that went away")
	_, err := c.Call(ctx, "getTabs", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "no browser is connected") {
		t.Fatalf("without the extension: %v", err)
	}
}

// TestLegacyLateAnswer: on a legacy relay a call that gives up (its
// CallTimeout) must not leave its late answer for the next call to take,
// since answers carry no id.
func TestLegacyLateAnswer(t *testing.T) {
	r := browsertest.NewLegacyRelay()
	t.Cleanup(r.Close)
	c := browser.NewClient(browser.Options{URL: r.MCPURL(), Logger: slog.New(log.New(&testenv.Buffer{})), CallTimeout: 200 * time.Millisecond})
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	ctx := legacyCtx(t)
	if _, err := c.Call(ctx, "getTabs", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	gaveUp := make(chan struct{})
	r.Extension().Handle("getConsoleMessages", func(context.Context, json.RawMessage) (any, error) {
		<-gaveUp
		return map[string]any{"messages": []any{"LATE"}}, nil
	})
	if _, err := c.Call(ctx, "getConsoleMessages", map[string]any{}); err == nil {
		t.Fatal("the slow call did not time out")
	}
	close(gaveUp)
	res, err := c.Call(ctx, "getTabs", map[string]any{})
	if err != nil || strings.Contains(string(res), "LATE") {
		t.Fatalf("getTabs after a timed-out call got %s, %v", res, err)
	}
}
