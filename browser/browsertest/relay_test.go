package browsertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/jsonrpc"

	"github.com/coder/websocket"
)

func TestHandshake(t *testing.T) {
	r := newRelay(t, nil)
	other := NewRelay(nil) // a relay with another secret
	other.Close()
	cases := []struct {
		name    string
		params  map[string]any
		wantErr string // "" for success
	}{
		{"access_token", map[string]any{"access_token": r.Token("alice", time.Hour), "client_id": "proj"}, ""},
		{"accessToken", map[string]any{"accessToken": r.Token("alice", time.Hour), "client_id": "proj"}, ""},
		{"other secret", map[string]any{"access_token": other.Token("alice", time.Hour)}, "Authentication failed: Invalid token"},
		{"garbage", map[string]any{"access_token": "not.a.jwt"}, "Authentication failed: Invalid token"},
		{"missing", map[string]any{}, "Authentication failed: Invalid token"},
		{"expired", map[string]any{"access_token": r.Token("alice", -time.Minute)}, "token expired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialMCP(t, r)
			res, rpcErr, err := rc.call(testCtx(t), "mcp_handshake", tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				wantCode(t, rpcErr, -32000, tc.wantErr)
				// and the relay closes the socket with 1008
				_, err := rc.await(testCtx(t), func(message) bool { return false })
				if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
					t.Fatalf("close status %v (%v), want 1008", st, err)
				}
				return
			}
			if rpcErr != nil {
				t.Fatalf("error %s", rpcErr)
			}
			var got struct {
				Authenticated bool   `json:"authenticated"`
				UserID        string `json:"user_id"`
				MCPClientID   string `json:"mcp_client_id"`
			}
			unmarshal(t, res, &got)
			if !got.Authenticated || got.UserID != "alice" || got.MCPClientID != "mcp-proj" {
				t.Fatalf("result %s", res)
			}
		})
	}
}

func TestMethodsBeforeHandshake(t *testing.T) {
	r := newRelay(t, nil)
	rc := dialMCP(t, r)
	for _, m := range []string{"list_extensions", "connect", "getTabs"} {
		wantCode(t, callErr(t, rc, m, nil), -32000, "mcp_handshake")
	}
	// the socket stays usable
	mustCall(t, rc, "mcp_handshake", map[string]any{"access_token": r.Token("alice", time.Hour)})
}

func TestListConnectDisconnect(t *testing.T) {
	r := newRelay(t, nil)
	ext := connectExtension(t, r, V19, "Chrome 141", "alice")
	rc := handshakeMCP(t, r, "alice")

	var list struct {
		Extensions []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Connected bool   `json:"connected"`
		} `json:"extensions"`
	}
	unmarshal(t, mustCall(t, rc, "list_extensions", nil), &list)
	if len(list.Extensions) != 1 || list.Extensions[0].ID != ext.ID() || list.Extensions[0].Name != "Chrome 141" ||
		!list.Extensions[0].Connected || !strings.HasPrefix(ext.ID(), "ext-") {
		t.Fatalf("list %+v, extension id %q", list, ext.ID())
	}

	wantCode(t, callErr(t, rc, "getTabs", nil), -32000, "Not connected to an extension")
	wantCode(t, callErr(t, rc, "connect", map[string]any{"extension_id": "ext-nope"}), -32000, "not found")

	var conn struct {
		ConnectionID  string `json:"connection_id"`
		ExtensionID   string `json:"extension_id"`
		ExtensionName string `json:"extension_name"`
	}
	unmarshal(t, mustCall(t, rc, "connect", map[string]any{"extension_id": ext.ID()}), &conn)
	if !strings.HasPrefix(conn.ConnectionID, "conn-") || conn.ExtensionID != ext.ID() || conn.ExtensionName != "Chrome 141" {
		t.Fatalf("connect: %+v", conn)
	}
	wantCode(t, callErr(t, rc, "connect", map[string]any{"extension_id": ext.ID()}), -32001, "already connected")
	mustCall(t, rc, "getTabs", nil)

	for range 2 { // idempotent
		if res := mustCall(t, rc, "disconnect", nil); string(res) != `{"disconnected":true}` {
			t.Fatalf("disconnect: %s", res)
		}
	}
	testenv.Eventually(t, 5*time.Second, func() bool {
		for _, n := range ext.Notifications() {
			if strings.Contains(string(n), `"disconnected"`) && strings.Contains(string(n), conn.ConnectionID) {
				return true
			}
		}
		return false
	}, "waiting for the extension to hear of the disconnect")
	wantCode(t, callErr(t, rc, "getTabs", nil), -32000, "Not connected to an extension")
	mustCall(t, rc, "connect", map[string]any{"extension_id": ext.ID()}) // and again
}

func TestIDMapping(t *testing.T) {
	s := newSession(t, V19, nil)
	ctx := testCtx(t)
	ids := []any{7, "550e8400-e29b-41d4-a716-446655440000", "with:colon", 0}
	for _, id := range ids {
		rawID, _ := json.Marshal(id)
		// connectionId is harmless: the relay strips it
		req := `{"jsonrpc":"2.0","id":` + string(rawID) + `,"method":"getTabs","params":{},"connectionId":"` + s.connID + `"}`
		if err := s.rc.send(req); err != nil {
			t.Fatal(err)
		}
		data, err := s.rc.await(ctx, func(m message) bool { return m.Method == "" && string(m.ID) == string(rawID) })
		if err != nil {
			t.Fatalf("id %s: %v", rawID, err)
		}
		var m message
		unmarshal(t, data, &m)
		if m.Result == nil {
			t.Fatalf("id %s: %s", rawID, data)
		}
	}
	var seen []string
	for _, raw := range s.ext.Received() {
		var m map[string]json.RawMessage
		unmarshal(t, raw, &m)
		if _, ok := m["connectionId"]; ok {
			t.Errorf("the extension got connectionId: %s", raw)
		}
		var id string
		unmarshal(t, m["id"], &id) // always a string on the extension side
		seen = append(seen, id)
	}
	want := []string{"proxy:1"}
	for _, id := range ids {
		want = append(want, s.connID+":"+jsonrpc.IDKey(mustJSON(id)))
	}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Fatalf("extension saw ids %q, want %q", seen, want)
	}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// Two MCP clients on one extension may use the same ids.
func TestIDsOfTwoClientsDoNotCollide(t *testing.T) {
	s := newSession(t, V19, nil)
	s.ext.AddPage("http://a.test/", "A")
	s.ext.AddPage("http://b.test/", "B")
	rc2 := handshakeMCP(t, s.r, "alice")
	mustCall(t, rc2, "connect", map[string]any{"extension_id": s.ext.ID()})
	ctx := testCtx(t)
	for _, c := range []struct {
		rc  *rpcClient
		url string
	}{{s.rc, "http://a.test/"}, {rc2, "http://b.test/"}} {
		if _, _, err := c.rc.callID(ctx, 100, "createTab", map[string]any{"url": c.url}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	titles := make([]string, 2)
	for i, rc := range []*rpcClient{s.rc, rc2} {
		wg.Go(func() {
			res, _, err := rc.callID(ctx, 1, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "document.title"}))
			if err != nil {
				t.Error(err)
				return
			}
			var v struct{ Result struct{ Value string } }
			_ = json.Unmarshal(res, &v)
			titles[i] = v.Result.Value
		})
	}
	wg.Wait()
	if titles[0] != "A" || titles[1] != "B" {
		t.Fatalf("titles %q, want [A B]", titles)
	}
}

func TestIsolationBetweenUsers(t *testing.T) {
	r := newRelay(t, nil)
	ext := connectExtension(t, r, V15, "Alice's Chrome", "alice")
	bob := handshakeMCP(t, r, "bob")
	if res := mustCall(t, bob, "list_extensions", nil); string(res) != `{"extensions":[]}` {
		t.Fatalf("bob sees %s", res)
	}
	wantCode(t, callErr(t, bob, "connect", map[string]any{"extension_id": ext.ID()}), -32000, "not found")
	alice := handshakeMCP(t, r, "alice")
	mustCall(t, alice, "connect", map[string]any{"extension_id": ext.ID()})
}

func TestReservedIDsRejected(t *testing.T) {
	s := newSession(t, V19, nil)
	for _, id := range []string{"proxy:1", "ext:9"} {
		_, rpcErr, err := s.rc.callID(testCtx(t), id, "getTabs", nil)
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, rpcErr, -32600, "reserved")
	}
	mustCall(t, s.rc, "getTabs", nil)
	if n := len(s.ext.Received()); n != 2 { // authenticate and the last getTabs
		t.Fatalf("the extension got %d requests, want 2", n)
	}
}

func TestExtensionCloseTellsClients(t *testing.T) {
	s := newSession(t, V19, nil)
	s.ext.Handle("getTabs", func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, ErrNoResponse
	})
	if err := s.rc.send(`{"jsonrpc":"2.0","id":42,"method":"getTabs","params":{}}`); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return len(s.ext.Received()) == 2 }, "waiting for the request to reach the extension")
	s.ext.Disconnect()

	var p struct {
		ConnectionID string `json:"connection_id"`
		Reason       string `json:"reason"`
	}
	unmarshal(t, awaitNotification(t, s.rc, "disconnected"), &p)
	if p.ConnectionID != s.connID || p.Reason != "Extension closed" {
		t.Fatalf("disconnected %+v, want connection %s", p, s.connID)
	}
	// The request in flight never gets an answer.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if data, err := s.rc.await(ctx, func(m message) bool { return string(m.ID) == "42" }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("pending request: got %s, %v", data, err)
	}
	wantCode(t, callErr(t, s.rc, "getTabs", nil), -32000, "Not connected to an extension")
	if res := mustCall(t, s.rc, "list_extensions", nil); string(res) != `{"extensions":[]}` {
		t.Fatalf("list after close: %s", res)
	}
	if len(s.r.Extensions()) != 0 {
		t.Fatalf("relay still has %+v", s.r.Extensions())
	}
}

func TestMCPCloseTellsExtension(t *testing.T) {
	s := newSession(t, V15, nil)
	s.rc.close()
	testenv.Eventually(t, 5*time.Second, func() bool {
		for _, n := range s.ext.Notifications() {
			var m message
			_ = json.Unmarshal(n, &m)
			var p struct {
				ConnectionID string `json:"connection_id"`
				Reason       string `json:"reason"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if m.Method == "disconnected" && p.ConnectionID == s.connID && p.Reason != "" {
				return true
			}
		}
		return false
	}, "waiting for the extension to hear of it")
}

func TestExtensionNotificationsReachConnectedClients(t *testing.T) {
	s := newSession(t, V19, nil)
	idle := handshakeMCP(t, s.r, "alice") // not connected: hears nothing
	if err := s.ext.Notify("notifications/tab_info_update", map[string]any{"currentTab": map[string]any{"id": 3}}); err != nil {
		t.Fatal(err)
	}
	if p := awaitNotification(t, s.rc, "notifications/tab_info_update"); string(p) != `{"currentTab":{"id":3}}` {
		t.Fatalf("params %s", p)
	}
	mustCall(t, idle, "list_extensions", nil) // a round trip after the broadcast
	if data, _ := idle.take(func(m message) bool { return m.Method == "notifications/tab_info_update" }); data != nil {
		t.Fatalf("an unconnected client got %s", data)
	}
}

func TestStatusNotifications(t *testing.T) {
	s := newSession(t, V19, &RelayOptions{StatusInterval: 20 * time.Millisecond})
	var p struct {
		Connected *bool  `json:"connected"`
		PeerCount *int   `json:"peer_count"`
		Timestamp string `json:"timestamp"`
	}
	// The first status comes right after mcp_handshake, before connect.
	data, err := s.rc.await(testCtx(t), func(m message) bool {
		return m.Method == "status" && strings.Contains(string(m.Params), `"connected":true`)
	})
	if err != nil {
		t.Fatalf("waiting for status: %v", err)
	}
	var m message
	unmarshal(t, data, &m)
	unmarshal(t, m.Params, &p)
	if p.Connected == nil || !*p.Connected || p.PeerCount == nil || *p.PeerCount != 1 {
		t.Fatalf("status to the MCP client: %+v", p)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000-0700", p.Timestamp); err != nil {
		t.Fatalf("timestamp: %v", err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool {
		for _, n := range s.ext.Notifications() {
			if strings.Contains(string(n), `"method":"status"`) && strings.Contains(string(n), `"peer_count":1`) {
				return true
			}
		}
		return false
	}, "waiting for a status to the extension")
}

func TestBadExtensionTokenIsRefused(t *testing.T) {
	r := newRelay(t, nil)
	for _, tok := range []string{"garbage", r.Token("alice", -time.Second), NewRelayToken(t, "alice")} {
		e := NewExtension(V19, "Chrome")
		err := e.Connect(testCtx(t), r.ExtensionURL(), tok)
		e.Close()
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("token %.20q: Connect = %v, want close 1008", tok, err)
		}
	}
	if len(r.Extensions()) != 0 {
		t.Fatalf("relay has %+v", r.Extensions())
	}
}

// NewRelayToken is a token of another relay (another secret).
func NewRelayToken(t testing.TB, userID string) string {
	other := NewRelay(nil)
	other.Close()
	return other.Token(userID, time.Hour)
}

func TestExtensionIDStablePerClientID(t *testing.T) {
	r := newRelay(t, nil)
	e := connectExtension(t, r, V19, "Chrome", "alice")
	id := e.ID()
	e.Disconnect()
	if err := e.Connect(testCtx(t), r.ExtensionURL(), r.Token("alice", time.Hour)); err != nil {
		t.Fatal(err)
	}
	if e.ID() != id {
		t.Fatalf("id %s, then %s", id, e.ID())
	}
	if other := connectExtension(t, r, V19, "Chrome", "alice"); other.ID() == id {
		t.Fatal("two extensions share an id")
	}
}

func TestCloseClientConnections(t *testing.T) {
	s := newSession(t, V19, nil)
	s.r.CloseClientConnections()
	if _, err := s.rc.await(testCtx(t), func(message) bool { return false }); err == nil {
		t.Fatal("MCP socket still open")
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return !s.ext.Connected() && len(s.r.Extensions()) == 0 }, "waiting for the extension socket to drop")
	// still listening
	if err := s.ext.Connect(testCtx(t), s.r.ExtensionURL(), s.r.Token("alice", time.Hour)); err != nil {
		t.Fatal(err)
	}
	rc := handshakeMCP(t, s.r, "alice")
	mustCall(t, rc, "connect", map[string]any{"extension_id": s.ext.ID()})
}

func TestRestartKeepsPort(t *testing.T) {
	s := newSession(t, V19, nil)
	url, id, tok := s.r.URL, s.ext.ID(), s.r.Token("alice", time.Hour)
	s.r.Restart()
	if s.r.URL != url {
		t.Fatalf("URL %s, then %s", url, s.r.URL)
	}
	if _, err := s.rc.await(testCtx(t), func(message) bool { return false }); err == nil {
		t.Fatal("MCP socket survived the restart")
	}
	if err := s.ext.Connect(testCtx(t), s.r.ExtensionURL(), tok); err != nil {
		t.Fatal(err)
	}
	if s.ext.ID() != id {
		t.Fatalf("extension id %s, then %s", id, s.ext.ID())
	}
	rc := handshakeMCP(t, s.r, "alice") // old tokens still good
	mustCall(t, rc, "connect", map[string]any{"extension_id": id})
	mustCall(t, rc, "getTabs", nil)
}

func TestDelayReordersAndDropResponse(t *testing.T) {
	s := newSession(t, V19, &RelayOptions{
		Delay: func(key string) time.Duration {
			if key == "getTabs" {
				return 100 * time.Millisecond
			}
			return 0
		},
		DropResponse: func(key string) bool { return key == "forwardCDPCommand:Page.reload" },
	})
	ctx := testCtx(t)
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"getTabs","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"createTab","params":{"url":"http://x.test/"}}`,
	} {
		if err := s.rc.send(req); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.rc.await(ctx, func(m message) bool { return m.Method == "" })
	if err != nil {
		t.Fatal(err)
	}
	var m message
	unmarshal(t, first, &m)
	if string(m.ID) != "2" {
		t.Fatalf("first response %s, want id 2 (getTabs is delayed)", first)
	}
	mustCall(t, s.rc, "getTabs", nil) // takes the delayed one's place in the queue fine

	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	if _, _, err := s.rc.callID(short, 99, "forwardCDPCommand", cdp("Page.reload", nil)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dropped response: err %v", err)
	}
}

func TestFramesRecorded(t *testing.T) {
	s := newSession(t, V19, nil)
	mustCall(t, s.rc, "getTabs", nil)
	var mcp, ext []string
	for _, f := range s.r.Frames() {
		var m message
		unmarshal(t, f.Data, &m)
		switch f.Side {
		case SideMCP:
			mcp = append(mcp, m.Method)
			if !strings.HasPrefix(f.Conn, "mcp#") {
				t.Errorf("conn %q", f.Conn)
			}
		case SideExtension:
			ext = append(ext, jsonrpc.IDKey(m.ID))
			if !strings.HasPrefix(f.Conn, "extension#") {
				t.Errorf("conn %q", f.Conn)
			}
		}
	}
	if got := strings.Join(mcp, " "); got != "mcp_handshake connect getTabs" {
		t.Errorf("MCP frames: %s", got)
	}
	if len(ext) != 2 || ext[0] != "proxy:1" || ext[1] != s.connID+":3" {
		t.Errorf("extension frames: %q", ext)
	}
}

func TestCloseIsIdempotentAndConcurrent(t *testing.T) {
	s := newSession(t, V15, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(s.r.Close)
	}
	wg.Wait()
	s.r.Close()
	s.r.Restart() // no-op once closed
	if _, err := dialRPC(testCtx(t), s.r.MCPURL()); err == nil {
		t.Fatal("dial after Close succeeded")
	}
}

func TestExtensionCredentials(t *testing.T) {
	r := newRelay(t, nil)
	tok := r.Token("alice", time.Hour)
	cases := []struct {
		name   string
		result map[string]any
		ok     bool
	}{
		{"accessToken", map[string]any{"name": "Chrome 141", "accessToken": tok}, true},
		{"no name", map[string]any{"access_token": tok}, false},
		{"no token", map[string]any{"name": "Chrome 141"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := NewExtension(V19, "ignored")
			defer e.Close()
			e.Handle("authenticate", func(context.Context, json.RawMessage) (any, error) { return tc.result, nil })
			err := e.Connect(testCtx(t), r.ExtensionURL(), tok)
			if tc.ok != (err == nil) {
				t.Fatalf("Connect = %v", err)
			}
			if !tc.ok && websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("Connect = %v, want close 1008", err)
			}
		})
	}
}

func TestNotifyMCP(t *testing.T) {
	r := newRelay(t, nil)
	rc := handshakeMCP(t, r, "alice")
	r.NotifyMCP("build_info", map[string]any{"buildTimestamp": "x"})
	if p := awaitNotification(t, rc, "build_info"); string(p) != `{"buildTimestamp":"x"}` {
		t.Fatalf("params %s", p)
	}
}

func TestTokenClaims(t *testing.T) {
	r := newRelay(t, nil)
	tok := r.Token("alice", time.Hour)
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tok)
	}
	head, _ := base64.RawURLEncoding.DecodeString(parts[0])
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		UserID, Email, SessionID, ConnectionURL string
		Iat, Exp                                int64
	}
	unmarshal(t, payload, &struct {
		UserID        *string `json:"user_id"`
		Email         *string `json:"email"`
		SessionID     *string `json:"session_id"`
		ConnectionURL *string `json:"connection_url"`
		Iat           *int64  `json:"iat"`
		Exp           *int64  `json:"exp"`
	}{&c.UserID, &c.Email, &c.SessionID, &c.ConnectionURL, &c.Iat, &c.Exp})
	if !strings.Contains(string(head), `"HS256"`) || c.UserID != "alice" || c.Email == "" || c.SessionID == "" ||
		c.ConnectionURL != r.MCPURL() || c.Exp-c.Iat != 3600 {
		t.Fatalf("header %s, claims %+v", head, c)
	}
	if got := connectionURL(tok); got != r.MCPURL() {
		t.Fatalf("connectionURL = %q", got)
	}
}

// Screenshots are megabytes: both sides' read limits allow them.
func TestLargeResult(t *testing.T) {
	t.Parallel()
	s := newSession(t, V19, nil)
	big := strings.Repeat("A", 2<<20) // the default read limit is 32 KiB
	s.ext.Handle("forwardCDPCommand:Page.captureScreenshot", func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"data": big}, nil
	})
	mustCall(t, s.rc, "createTab", nil)
	var shot struct{ Data string }
	unmarshal(t, mustCall(t, s.rc, "forwardCDPCommand", cdp("Page.captureScreenshot", nil)), &shot)
	if len(shot.Data) != len(big) {
		t.Fatalf("got %d bytes", len(shot.Data))
	}
	// and a large request reaches the extension
	mustCall(t, s.rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": big[:1<<20]}))
}

// TestExtensionReplacesItsSocket: the same browser (by client_id) on a
// second socket takes the first one's place without dropping its MCP
// clients: a request sent on the old socket fails at once, no
// "disconnected" is sent, and the next request works on the new socket
// under the same connection.
func TestExtensionReplacesItsSocket(t *testing.T) {
	s := newSession(t, V19, nil)
	s.ext.Handle("getTabs", func(context.Context, json.RawMessage) (any, error) { return nil, ErrNoResponse })
	lost := make(chan json.RawMessage, 1)
	go func() {
		_, rpcErr, _ := s.rc.call(testCtx(t), "getTabs", nil)
		lost <- rpcErr
	}()
	testenv.Eventually(t, 5*time.Second, func() bool {
		for _, m := range s.ext.Received() {
			if strings.Contains(string(m), `"getTabs"`) {
				return true
			}
		}
		return false
	}, "waiting for the request to reach the extension")

	twin := NewExtension(V19, "Chrome 141")
	twin.clientID = s.ext.clientID // the same browser profile
	t.Cleanup(twin.Close)
	if err := twin.Connect(testCtx(t), s.r.ExtensionURL(), s.r.Token("alice", time.Hour)); err != nil {
		t.Fatal(err)
	}
	if twin.ID() != s.ext.ID() {
		t.Fatalf("the twin got id %s, want %s", twin.ID(), s.ext.ID())
	}
	select {
	case rpcErr := <-lost:
		if !strings.Contains(string(rpcErr), "reconnected") {
			t.Fatalf("the lost request: %s", rpcErr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request sent on the old socket never failed")
	}
	res := mustCall(t, s.rc, "createTab", map[string]any{"url": "about:blank"})
	if !strings.Contains(string(res), `"tab"`) {
		t.Fatalf("createTab on the new socket: %s", res)
	}
	if data, _ := s.rc.take(func(m message) bool { return m.Method == "disconnected" }); data != nil {
		t.Fatalf("the client was told %s", data)
	}
}
