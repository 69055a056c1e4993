package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// watchedURI is the resource of the test servers whose updates a test
// subscribes to.
const watchedURI = "test://watched"

// updates collects the resources/updated notifications a Client relays.
type updates struct {
	mu   sync.Mutex
	seen []json.RawMessage
}

func (u *updates) note(server, method string, params json.RawMessage) {
	if method != "notifications/resources/updated" {
		return
	}
	u.mu.Lock()
	u.seen = append(u.seen, params)
	u.mu.Unlock()
}

func (u *updates) all() []json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.seen)
}

// TestListen: on a modern server (the Go SDK, dual-era under protocol
// modern and modern-only, over HTTP), mcpx opens subscriptions/listen and hears on it a tool
// added while it runs, which reaches its catalog, and the updates of a
// resource subscribed to, which reach OnNotification without the
// stream's own id; resources/subscribe becomes the stream's filter
// instead of a request. A legacy connection to the same server hears
// both the legacy way.
func TestListen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		era      string
		protocol config.Protocol
		modern   bool
	}{
		{dualEra, config.ProtocolModern, true},
		{modernOnly, "", true},
		{dualEra, "", false},
	} {
		t.Run(fmt.Sprintf("%s/protocol=%s", tc.era, tc.protocol), func(t *testing.T) {
			t.Parallel()
			s := startGoSDKServer(t, tc.era)
			var got updates
			opts := fastOptions()
			opts.OnNotification = got.note
			cfg := remoteServer("gosdk", s.url+"/mcp")
			cfg.Protocol = tc.protocol
			c := connect(t, cfg, opts)
			if modern := upstream.EraOf(c.Status().ProtocolVersion) == upstream.EraModern; modern != tc.modern {
				t.Fatalf("protocol %q, want modern %t", c.Status().ProtocolVersion, tc.modern)
			}
			checkHearsChanges(t, c, &got, "grow", "touch", watchedURI)
			seen := s.methods()
			if tc.modern && (!slices.Contains(seen, "subscriptions/listen") || slices.Contains(seen, "resources/subscribe")) {
				t.Errorf("POSTs %q: want subscriptions/listen and no resources/subscribe", seen)
			}
		})
	}
}

// TestListenReopened: when the listen stream breaks (the server drops
// every connection), mcpx opens it again, and a tool added after that
// still reaches the catalog.
func TestListenReopened(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, modernOnly)
	c := connect(t, remoteServer("gosdk", s.url+"/mcp"), fastOptions())
	grows := func(what string) {
		before := len(c.Tools())
		testenv.Eventually(t, 15*time.Second, func() bool {
			callTool(t, c, "grow", map[string]any{}) // a call on a dropped connection may fail
			time.Sleep(20 * time.Millisecond)
			return len(c.Tools()) > before
		}, "%s: the catalog still has %d tools after grow", what, before)
	}
	grows("the first stream")
	s.hs.CloseClientConnections()
	grows("after the stream broke")
	if n := slices.Index(s.methods(), "subscriptions/listen"); n < 0 {
		t.Error("no subscriptions/listen after the connections were dropped")
	}
}

// TestListenStdio: the Go SDK's reference server over stdio, modern by
// its protocol key: a
// tool it adds reaches the catalog, and its watched resource's updates
// (it makes one every few seconds) reach OnNotification.
func TestListenStdio(t *testing.T) {
	t.Parallel()
	reference := testenv.GoTool(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	var got updates
	opts := fastOptions()
	opts.OnNotification = got.note
	c := connect(t, config.Server{Name: "gosdk", Transport: config.TransportStdio, Command: reference, Enabled: true, Timeout: 10 * time.Second,
		Protocol: config.ProtocolModern}, opts)
	if v := c.Status().ProtocolVersion; upstream.EraOf(v) != upstream.EraModern {
		t.Fatalf("protocol %q, want modern", v)
	}
	checkHearsChanges(t, c, &got, "test_trigger_tool_change", "", "test://watched-resource")
}

// checkHearsChanges calls grow until the catalog has more tools than
// before, subscribes to uri and calls touch (when there is one) until an
// update of uri came.
func checkHearsChanges(t *testing.T, c *upstream.Client, got *updates, grow, touch, uri string) {
	t.Helper()
	before := len(c.Tools())
	testenv.Eventually(t, 15*time.Second, func() bool {
		mustCall(t, c, grow)
		time.Sleep(20 * time.Millisecond)
		return len(c.Tools()) > before
	}, "the catalog still has %d tools after %s", before, grow)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Request(ctx, "resources/subscribe", json.RawMessage(`{"uri":"`+uri+`"}`)); err != nil {
		t.Fatalf("resources/subscribe: %v", err)
	}
	testenv.Eventually(t, 15*time.Second, func() bool {
		if touch != "" {
			mustCall(t, c, touch)
		}
		time.Sleep(20 * time.Millisecond)
		return len(got.all()) > 0
	}, "no resources/updated for %s", uri)
	for _, p := range got.all() {
		var n struct {
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		}
		json.Unmarshal(p, &n)
		if n.URI != uri {
			t.Errorf("an update of %q, want only %q", n.URI, uri)
		}
		if _, ok := n.Meta["io.modelcontextprotocol/subscriptionId"]; ok {
			t.Errorf("an update carries mcpx's own subscription id: %s", p)
		}
	}
}

func mustCall(t *testing.T, c *upstream.Client, tool string) {
	t.Helper()
	raw, err := callTool(t, c, tool, map[string]any{})
	if err != nil || decodeResult(t, raw).IsError {
		t.Fatalf("call %s: %v %s", tool, err, truncate(raw))
	}
}
