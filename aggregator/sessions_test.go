package aggregator

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
)

// twoSessions serves one Aggregator over src to two clients.
func twoSessions(t *testing.T, src *fakeSource) (*Aggregator, *stdioClient, *stdioClient) {
	t.Helper()
	a := New(&config.Config{Separator: "_", Expose: config.ExposeDirect}, nil)
	a.members = []*member{mem(src, "alpha")}
	a.Rebuild()
	close(a.ready)
	x, y := serveOn(t, a), serveOn(t, a)
	for _, c := range []*stdioClient{x, y} {
		c.initialize()
		c.sync() // notifications/initialized is read: relayed notifications reach it
	}
	return a, x, y
}

// relayed returns the params of the notifications with method c got
// since n, after a sync.
func relayed(c *stdioClient, n int, method string) []string {
	c.sync()
	var out []string
	for _, m := range c.notesSince(n) {
		if m.Method == method {
			out = append(out, string(m.Params))
		}
	}
	return out
}

// TestSessionLogLevels: each session gets the log messages at or above
// its own level.
func TestSessionLogLevels(t *testing.T) {
	a, x, y := twoSessions(t, &fakeSource{name: "alpha"})
	if r := x.call(1, "logging/setLevel", map[string]string{"level": "error"}); r.Error != nil {
		t.Fatal(r.line)
	}
	if r := y.call(1, "logging/setLevel", map[string]string{"level": "debug"}); r.Error != nil {
		t.Fatal(r.line)
	}
	if got := a.mostVerboseLevel(); got != "debug" {
		t.Errorf("the shared upstreams' level = %q, want debug", got)
	}
	nx, ny := x.noteCount(), y.noteCount()
	for _, level := range []string{"debug", "info", "error", "alert"} {
		a.serverNotification("alpha", "notifications/message", json.RawMessage(`{"level":"`+level+`","data":"`+level+`"}`))
	}
	want := func(levels ...string) []string {
		var out []string
		for _, l := range levels {
			out = append(out, `{"data":"`+l+`","level":"`+l+`","logger":"alpha"}`)
		}
		return out
	}
	if got := relayed(x, nx, "notifications/message"); !slices.Equal(got, want("error", "alert")) {
		t.Errorf("the session at error got %q", got)
	}
	if got := relayed(y, ny, "notifications/message"); !slices.Equal(got, want("debug", "info", "error", "alert")) {
		t.Errorf("the session at debug got %q", got)
	}
}

// TestSessionSubscriptions: the upstream is subscribed once for every
// session and unsubscribed when the last one unsubscribes or ends;
// updates reach only the sessions subscribed.
func TestSessionSubscriptions(t *testing.T) {
	src := &fakeSource{name: "alpha"}
	src.set("resources", raws(t, `{"uri":"mem://a","name":"a"}`, `{"uri":"mem://b","name":"b"}`))
	requests := make(chan fakeCall, 16)
	src.setRequest(func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		requests <- fakeCall{method, params}
		return json.RawMessage(`{}`), nil
	})
	a, x, y := twoSessions(t, src)
	next := func(want string) {
		t.Helper()
		select {
		case r := <-requests:
			if got := r.Method + " " + string(r.Params); got != want {
				t.Errorf("upstream got %s, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("upstream got no %s", want)
		}
	}
	none := func() {
		t.Helper()
		select {
		case r := <-requests:
			t.Errorf("upstream got %s %s, want nothing", r.Method, r.Params)
		default:
		}
	}
	sub := func(c *stdioClient, id int, method, uri string) {
		t.Helper()
		if r := c.call(id, method, map[string]string{"uri": uri}); r.Error != nil {
			t.Fatal(r.line)
		}
	}
	sub(x, 1, "resources/subscribe", "mem://a")
	next(`resources/subscribe {"uri":"mem://a"}`)
	sub(y, 1, "resources/subscribe", "mem://a")
	sub(y, 2, "resources/subscribe", "mem://b")
	next(`resources/subscribe {"uri":"mem://b"}`)
	none()

	nx, ny := x.noteCount(), y.noteCount()
	for _, uri := range []string{"mem://a", "mem://b"} {
		a.serverNotification("alpha", "notifications/resources/updated", json.RawMessage(`{"uri":"`+uri+`"}`))
	}
	if got := relayed(x, nx, "notifications/resources/updated"); !slices.Equal(got, []string{`{"uri":"mem://a"}`}) {
		t.Errorf("subscribed to mem://a, got %q", got)
	}
	if got := relayed(y, ny, "notifications/resources/updated"); !slices.Equal(got, []string{`{"uri":"mem://a"}`, `{"uri":"mem://b"}`}) {
		t.Errorf("subscribed to both, got %q", got)
	}

	sub(x, 2, "resources/unsubscribe", "mem://a")
	none() // y still wants mem://a
	y.in.Close()
	// The session's subscriptions end together, in no set order.
	var ended []string
	for range 2 {
		select {
		case r := <-requests:
			ended = append(ended, r.Method+" "+string(r.Params))
		case <-time.After(5 * time.Second):
			t.Fatalf("upstream got %q, want two unsubscribes", ended)
		}
	}
	slices.Sort(ended)
	if want := []string{`resources/unsubscribe {"uri":"mem://a"}`, `resources/unsubscribe {"uri":"mem://b"}`}; !slices.Equal(ended, want) {
		t.Errorf("when the last subscriber ended, upstream got %q, want %q", ended, want)
	}
}
