package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// listen opens the session's standalone (GET) stream and returns the
// messages it carries, in order. The session's POSTs ask for plain JSON,
// so every notification mcpx sends the session rides this one stream,
// in the order mcpx queued it.
func (s *rawSession) listen() <-chan string {
	s.t.Helper()
	resp := s.stream("GET", "", "text/event-stream")
	s.t.Cleanup(func() { resp.Body.Close() })
	out := make(chan string, 1024)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- data
			}
		}
	}()
	return out
}

// until reads messages from stream until one contains want, and returns
// those before it.
func until(t *testing.T, name string, stream <-chan string, want string) []string {
	t.Helper()
	var before []string
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-stream:
			if !ok {
				t.Fatalf("%s: the stream ended before %s; got %q", name, want, before)
			}
			if strings.Contains(m, want) {
				return before
			}
			before = append(before, m)
		case <-timeout:
			t.Fatalf("%s: no %s in a minute; got %q", name, want, before)
		}
	}
}

// logNote is a notifications/message as a client gets it.
type logNote struct {
	Method string
	Params struct {
		Level string
		Data  any
	}
}

// TestServeHTTPSessionIsolation: two sessions sharing one upstream
// (server-everything) each get the log messages at the level they asked
// for, and the resource updates of the URIs they subscribed to, and not
// the other's; when the session that asked for the most verbose level
// ends, the upstream's level is set back to the other's.
func TestServeHTTPSessionIsolation(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "prefix": ""}}})
	srv := startHTTP(t, cfg, nil, "--log-level", "debug")
	url := srv.url + "/mcp"

	a, b := openRaw(t, url), openRaw(t, url)
	aStream, bStream := a.listen(), b.listen()

	resources := func() []string {
		var list struct {
			Result struct {
				Resources []struct{ URI string }
			}
		}
		out := a.call(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("resources/list: %v %s", err, out)
		}
		var uris []string
		for _, r := range list.Result.Resources {
			uris = append(uris, r.URI)
		}
		return uris
	}
	uris := resources()
	if len(uris) < 3 {
		// The first list waits only so long for a server still starting
		// (on a loaded machine): it is announced when it comes.
		until(t, "A", aStream, "notifications/resources/list_changed")
		if uris = resources(); len(uris) < 3 {
			t.Fatalf("resources/list after list_changed: %q", uris)
		}
	}
	ua, ub, uc := uris[0], uris[1], uris[2]

	for s, level := range map[*rawSession]string{a: "error", b: "debug"} {
		if out := s.call(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"` + level + `"}}`); !strings.Contains(out, `"result"`) {
			t.Fatalf("logging/setLevel %s: %s", level, out)
		}
	}
	// Each subscription makes the upstream log it at "info": B, at
	// "debug", gets both; A, at "error", neither.
	for _, sub := range []struct {
		s   *rawSession
		uri string
	}{{a, ua}, {b, ub}} {
		if out := sub.s.call(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"` + sub.uri + `"}}`); !strings.Contains(out, `"result"`) {
			t.Fatalf("resources/subscribe %s: %s", sub.uri, out)
		}
	}
	// Turning the upstream's updates on sends one for each subscribed URI
	// at once, A's first (it subscribed first), after the log messages
	// above. Off and on again sends another round, after which any
	// update of B's would have reached A.
	toggle := func() {
		if out := a.call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"toggle-subscriber-updates","arguments":{}}}`); !strings.Contains(out, `"result"`) {
			t.Fatalf("toggle-subscriber-updates: %s", out)
		}
	}
	toggle()
	updated := func(uri string) string { return `"notifications/resources/updated","params":{"uri":"` + uri + `"}` }
	first := until(t, "A", aStream, updated(ua))
	toggle()
	toggle()
	for _, m := range append(first, until(t, "A", aStream, updated(ua))...) {
		var n logNote
		_ = json.Unmarshal([]byte(m), &n)
		if n.Method == "notifications/message" && n.Params.Level != "error" && n.Params.Level != "critical" && n.Params.Level != "alert" && n.Params.Level != "emergency" {
			t.Errorf("A, at level error, got a %s log message: %s", n.Params.Level, m)
		}
		if strings.Contains(m, updated(ub)) {
			t.Errorf("A got an update of B's subscription: %s", m)
		}
	}
	logs := 0
	for _, m := range until(t, "B", bStream, updated(ub)) {
		var n logNote
		_ = json.Unmarshal([]byte(m), &n)
		if n.Method == "notifications/message" && n.Params.Level == "info" && strings.Contains(m, "Received Subscribe Resource request") {
			logs++
		}
		if strings.Contains(m, updated(ua)) {
			t.Errorf("B got an update of A's subscription: %s", m)
		}
	}
	if logs != 2 {
		t.Errorf("B, at level debug, got %d of the 2 info messages the subscriptions caused", logs)
	}

	// B ends: the upstream is set back to A's level, "error", so a
	// session that set none (and so gets every message mcpx relays) sees
	// no info message when it subscribes.
	if code, _, body := do(t, "DELETE", url, b.header("application/json"), ""); code != 204 {
		t.Fatalf("DELETE B: %d %s", code, body)
	}
	testenv.Eventually(t, time.Minute, func() bool { return strings.Contains(srv.stderr.String(), "log level is set back") },
		"mcpx did not set the upstream's log level back when B ended")
	c := openRaw(t, url)
	cStream := c.listen()
	if out := c.call(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"` + uc + `"}}`); !strings.Contains(out, `"result"`) {
		t.Fatalf("resources/subscribe %s: %s", uc, out)
	}
	toggle()
	toggle()
	for _, m := range until(t, "C", cStream, updated(uc)) {
		if strings.Contains(m, "Received Subscribe Resource request") {
			t.Errorf("after B (at debug) ended, the upstream still sends info messages: %s", m)
		}
		if strings.Contains(m, updated(ua)) || strings.Contains(m, updated(ub)) {
			t.Errorf("C got an update of another session's subscription: %s", m)
		}
	}
}
