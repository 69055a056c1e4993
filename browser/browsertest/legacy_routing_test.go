package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestLegacyOneRequestAtATime: a legacy extension answers without
// ids, so a connection has one request open at a time: a fast request
// behind a slow one is not forwarded until the slow one is answered, and
// neither gets the other's answer.
func TestLegacyOneRequestAtATime(t *testing.T) {
	s := newLegacySetup(t)
	a, _ := s.client(t, "a")
	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	s.ext.Handle("createTab", func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-release
		return map[string]any{"tab": map[string]any{"id": 7, "url": "about:blank"}}, nil
	})
	if err := a.send(`{"jsonrpc":"2.0","id":"slow","method":"createTab","params":{}}`); err != nil {
		t.Fatal(err)
	}
	if err := a.send(`{"jsonrpc":"2.0","id":"fast","method":"getTabs","params":{}}`); err != nil {
		t.Fatal(err)
	}
	// The relay reads a socket in order: once it has answered this, it
	// has handled "fast" too.
	mustCall(t, a, "list_extensions", nil)
	for _, r := range forwarded(t, s.ext) {
		if r.Method == "getTabs" {
			t.Fatal("the relay forwarded a second request while the first was open")
		}
	}
	close(release)
	for range 2 {
		data, err := a.await(testCtx(t), func(m message) bool {
			return m.Method == "" && (string(m.ID) == `"slow"` || string(m.ID) == `"fast"`)
		})
		if err != nil {
			t.Fatal(err)
		}
		var m message
		unmarshal(t, data, &m)
		if isTabs := strings.HasPrefix(string(m.Result), `{"tabs"`); (string(m.ID) == `"fast"`) != isTabs {
			t.Errorf("crossed answer: %s", data)
		}
	}
}

// TestLegacyEventsFollowTheTab: a tab a client left no longer routes
// its events to it.
func TestLegacyEventsFollowTheTab(t *testing.T) {
	s := newLegacySetup(t)
	a, _ := s.client(t, "a")
	b, _ := s.client(t, "b")
	tab := tabOf(t, mustCall(t, a, "createTab", nil)) // index 1
	mustCall(t, a, "selectTab", map[string]any{"tabIndex": 0})
	mustCall(t, b, "selectTab", map[string]any{"tabIndex": 1})
	if err := s.ext.ForwardCDPEvent(tab, "Page.loadEventFired", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.await(testCtx(t), func(m message) bool { return m.Method == "forwardCDPEvent" }); err != nil {
		t.Fatal(err)
	}
	mustCall(t, a, "getTabs", nil)
	if data, _ := a.take(func(m message) bool { return m.Method == "forwardCDPEvent" }); data != nil {
		t.Fatalf("A, which left tab %d, got its event %s", tab, data)
	}
}

// TestLegacyEchoedIDRoutes: an answer that echoes the mapped id but has
// no connectionId, while two connections wait, reaches the connection its
// id names.
func TestLegacyEchoedIDRoutes(t *testing.T) {
	s := newLegacySetup(t)
	a, connA := s.client(t, "a")
	b, _ := s.client(t, "b")
	s.ext.Handle("getTabs", func(context.Context, json.RawMessage) (any, error) { return nil, ErrNoResponse })
	_ = a.send(`{"jsonrpc":"2.0","id":"x","method":"getTabs","params":{}}`)
	_ = b.send(`{"jsonrpc":"2.0","id":"y","method":"getTabs","params":{}}`)
	testenv.Eventually(t, 5*time.Second, func() bool { return len(forwarded(t, s.ext)) == 2 }, "waiting for both requests")
	_ = s.ext.Send(fmt.Sprintf(`{"id":"%s:x","result":{"tabs":[]}}`, connA))
	if _, err := a.await(testCtx(t), func(m message) bool { return string(m.ID) == `"x"` }); err != nil {
		t.Fatal(err)
	}
}
