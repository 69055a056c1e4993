package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// The relay serves extensions of the legacy protocol (extension_handshake,
// answers without ids routed by connectionId, events routed by tab) to MCP
// clients that speak protocol 1.0. These tests drive it with a raw MCP
// client and a Legacy scripted extension.

// setupLegacy is a local relay with a legacy extension on it.
type setupLegacy struct {
	r     *Relay
	ext   *Extension
	extID string
}

func newLegacySetup(t *testing.T) *setupLegacy {
	t.Helper()
	r := newRelay(t, &RelayOptions{Local: true})
	ext := NewExtension(Legacy, "Chrome 141")
	t.Cleanup(ext.Close)
	if err := ext.Connect(testCtx(t), r.ExtensionURL(), ""); err != nil {
		t.Fatal(err)
	}
	info, err := r.WaitExtension(testCtx(t), "Chrome 141")
	if err != nil {
		t.Fatal(err)
	}
	if info.ClientID != ext.ClientID() || info.Dialect != "legacy" {
		t.Fatalf("relay registered %+v, want client id %s, dialect legacy", info, ext.ClientID())
	}
	return &setupLegacy{r: r, ext: ext, extID: info.ID}
}

// client is an MCP client connected to the extension, and its
// connection id.
func (s *setupLegacy) client(t *testing.T, name string) (*rpcClient, string) {
	t.Helper()
	rc := dialMCP(t, s.r)
	mustCall(t, rc, "mcp_handshake", map[string]any{"client_id": name})
	var res struct {
		ConnectionID string `json:"connection_id"`
	}
	unmarshal(t, mustCall(t, rc, "connect", map[string]any{"extension_id": s.extID}), &res)
	if !strings.HasPrefix(res.ConnectionID, "conn-") {
		t.Fatalf("connection id %q", res.ConnectionID)
	}
	return rc, res.ConnectionID
}

// legacyRequest is a request as the legacy extension received it.
type legacyRequest struct {
	ID           string          `json:"id"`
	Method       string          `json:"method"`
	Params       json.RawMessage `json:"params"`
	ConnectionID string          `json:"connectionId"`
}

// forwarded returns the requests forwarded to the extension (the relay's
// authenticate left out).
func forwarded(t *testing.T, e *Extension) []legacyRequest {
	t.Helper()
	var out []legacyRequest
	for _, raw := range e.Received() {
		var r legacyRequest
		unmarshal(t, raw, &r)
		if r.Method != "authenticate" {
			out = append(out, r)
		}
	}
	return out
}

// rawCall sends a request with id and returns the whole response frame,
// decoded to its top-level members.
func rawCall(t *testing.T, rc *rpcClient, id, method string, params any) map[string]json.RawMessage {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if err := rc.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		t.Fatal(err)
	}
	want := mustJSON(id)
	data, err := rc.await(testCtx(t), func(m message) bool { return m.Method == "" && string(m.ID) == string(want) })
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	var frame map[string]json.RawMessage
	unmarshal(t, data, &frame)
	return frame
}

// wantResponse checks a frame is a JSON-RPC 2.0 response to id with a
// result (and nothing of the legacy protocol left in it), and returns the
// result.
func wantResponse(t *testing.T, frame map[string]json.RawMessage, id string) json.RawMessage {
	t.Helper()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range frame {
			if !yield(k) {
				return
			}
		}
	})
	if strings.Join(keys, ",") != "id,jsonrpc,result" || string(frame["jsonrpc"]) != `"2.0"` || string(frame["id"]) != string(mustJSON(id)) {
		t.Fatalf("response %s: want exactly jsonrpc 2.0, id %q and result", mustJSON(frame), id)
	}
	return frame["result"]
}

// tabOf reads the tab id of a createTab or selectTab result.
func tabOf(t *testing.T, res json.RawMessage) int {
	t.Helper()
	var r struct {
		Tab struct {
			ID int `json:"id"`
		} `json:"tab"`
	}
	unmarshal(t, res, &r)
	if r.Tab.ID == 0 {
		t.Fatalf("no tab in %s", res)
	}
	return r.Tab.ID
}

// evalValue reads the value of a Runtime.evaluate result.
func evalValue(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var v struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	unmarshal(t, res, &v)
	return v.Result.Value
}

func TestLegacySession(t *testing.T) {
	s := newLegacySetup(t)
	s.ext.AddPage("http://a.test/", "Page A")
	rc := dialMCP(t, s.r)
	mustCall(t, rc, "mcp_handshake", map[string]any{"client_id": "proj"})
	var list struct {
		Extensions []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Connected bool   `json:"connected"`
		} `json:"extensions"`
	}
	unmarshal(t, mustCall(t, rc, "list_extensions", nil), &list)
	if len(list.Extensions) != 1 || list.Extensions[0].ID != s.extID || list.Extensions[0].Name != "Chrome 141" || !list.Extensions[0].Connected {
		t.Fatalf("list %s", mustJSON(list))
	}
	var conn struct {
		ConnectionID string `json:"connection_id"`
	}
	unmarshal(t, mustCall(t, rc, "connect", map[string]any{"extension_id": s.extID}), &conn)

	tab := tabOf(t, wantResponse(t, rawCall(t, rc, "c-1", "createTab", map[string]any{"url": "http://a.test/"}), "c-1"))
	if title := evalValue(t, wantResponse(t, rawCall(t, rc, "c-2", "forwardCDPCommand",
		cdp("Runtime.evaluate", map[string]any{"expression": "document.title"})), "c-2")); title != "Page A" {
		t.Fatalf("title %q", title)
	}
	var tabs struct {
		Tabs []struct {
			ID  int    `json:"id"`
			URL string `json:"url"`
		} `json:"tabs"`
	}
	unmarshal(t, wantResponse(t, rawCall(t, rc, "c-3", "getTabs", nil), "c-3"), &tabs)
	if len(tabs.Tabs) != 2 || tabs.Tabs[1].ID != tab || tabs.Tabs[1].URL != "http://a.test/" {
		t.Fatalf("tabs %s", mustJSON(tabs))
	}

	// The extension got each request with the connection's id in
	// connectionId (and a mapped id it need not use).
	got := forwarded(t, s.ext)
	var methods []string
	for _, r := range got {
		methods = append(methods, r.Method)
		if r.ConnectionID != conn.ConnectionID || !strings.HasPrefix(r.ID, conn.ConnectionID+":") {
			t.Errorf("the extension got %+v, want connectionId %s", r, conn.ConnectionID)
		}
	}
	if strings.Join(methods, " ") != "createTab forwardCDPCommand getTabs" {
		t.Fatalf("the extension got %q", methods)
	}
}

// Two MCP clients on one legacy extension, their requests interleaved
// and pipelined with the same ids: each gets its own tab and only its own
// answers, in its own order.
func TestLegacyTwoClientsDoNotCross(t *testing.T) {
	s := newLegacySetup(t)
	s.ext.AddPage("http://a.test/", "A")
	s.ext.AddPage("http://b.test/", "B")
	a, _ := s.client(t, "a")
	b, _ := s.client(t, "b")
	tabA := tabOf(t, mustCall(t, a, "createTab", map[string]any{"url": "http://a.test/"}))
	tabB := tabOf(t, mustCall(t, b, "createTab", map[string]any{"url": "http://b.test/"}))
	if tabA == tabB {
		t.Fatalf("both clients got tab %d", tabA)
	}

	const n = 20
	expr := func(i int) string { // alternate, so that a shifted answer shows
		if i%2 == 0 {
			return "document.title"
		}
		return "location.href"
	}
	for i := range n {
		for _, rc := range []*rpcClient{a, b} {
			req := map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint(i), "method": "forwardCDPCommand",
				"params": cdp("Runtime.evaluate", map[string]any{"expression": expr(i)})}
			if err := rc.send(req); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		rc         *rpcClient
		title, url string
	}{{a, "A", "http://a.test/"}, {b, "B", "http://b.test/"}} {
		for i := range n {
			frame := rawCallAwait(t, c.rc, fmt.Sprint(i))
			want := c.title
			if i%2 == 1 {
				want = c.url
			}
			if got := evalValue(t, wantResponse(t, frame, fmt.Sprint(i))); got != want {
				t.Fatalf("client %s, request %d (%s): got %q, want %q", c.title, i, expr(i), got, want)
			}
		}
	}
	if extra, _ := a.take(func(m message) bool { return m.Method == "" }); extra != nil {
		t.Fatalf("client A got an extra answer %s", extra)
	}
	if extra, _ := b.take(func(m message) bool { return m.Method == "" }); extra != nil {
		t.Fatalf("client B got an extra answer %s", extra)
	}
}

// rawCallAwait waits for the response to id and returns its members.
func rawCallAwait(t *testing.T, rc *rpcClient, id string) map[string]json.RawMessage {
	t.Helper()
	want := mustJSON(id)
	data, err := rc.await(testCtx(t), func(m message) bool { return m.Method == "" && string(m.ID) == string(want) })
	if err != nil {
		t.Fatalf("waiting for the answer to %s: %v", id, err)
	}
	var frame map[string]json.RawMessage
	unmarshal(t, data, &frame)
	return frame
}

// A legacy error is a bare string; the client gets {code: -32000,
// message}. A bare object is the whole result.
func TestLegacyAnswerShapes(t *testing.T) {
	s := newLegacySetup(t)
	rc, connID := s.client(t, "a")

	// No tab yet: the extension answers {"connectionId", "error": "No tab attached"}.
	wantCode(t, callErr(t, rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "1"})), -32000, "No tab attached")
	if e := decodeErr(t, callErr(t, rc, "browser_navigate", nil)); e.Message != "Unknown command: browser_navigate" {
		t.Fatalf("unknown method: %+v", e)
	}
	// An error object passes as it is.
	s.ext.Handle("getConsoleMessages", func(context.Context, json.RawMessage) (any, error) {
		return nil, MessageStack.Errorf("boom")
	})
	if e := decodeErr(t, callErr(t, rc, "getConsoleMessages", nil)); e.Code != nil || e.Message != "boom" || e.Stack == "" {
		t.Fatalf("error object: %+v", e)
	}

	// A bare object, with and without connectionId, is the result.
	s.ext.Handle("get_build_info", func(context.Context, json.RawMessage) (any, error) { return nil, ErrNoResponse })
	for i, frame := range []string{
		`{"connectionId":"` + connID + `","buildTimestamp":"t1"}`,
		`{"buildTimestamp":"t2"}`, // the only connection waiting for an answer
	} {
		id := fmt.Sprintf("b-%d", i)
		if err := rc.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "get_build_info", "params": map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 5*time.Second, func() bool {
			got := forwarded(t, s.ext)
			return len(got) > 0 && got[len(got)-1].ID == connID+":"+id
		}, "waiting for the request to reach the extension")
		if err := s.ext.Send(frame); err != nil {
			t.Fatal(err)
		}
		res := wantResponse(t, rawCallAwait(t, rc, id), id)
		if want := fmt.Sprintf(`{"buildTimestamp":"t%d"}`, i+1); string(res) != want {
			t.Fatalf("bare answer %s: result %s, want %s", frame, res, want)
		}
	}
}

// Events go to the client holding the tab; an event of a tab nobody holds
// goes to every client of the extension, one with a connectionId to that
// connection alone.
func TestLegacyEventsRoutedByTab(t *testing.T) {
	s := newLegacySetup(t)
	a, connA := s.client(t, "a")
	b, _ := s.client(t, "b")
	tabA := tabOf(t, mustCall(t, a, "createTab", nil))
	tabB := tabOf(t, mustCall(t, b, "createTab", nil))

	// heardOnly checks that to got the event with this timestamp and,
	// after a round trip that orders it behind the event, other did not.
	heardOnly := func(to, other *rpcClient, stamp int) {
		t.Helper()
		data, err := to.await(testCtx(t), func(m message) bool { return m.Method == "forwardCDPEvent" })
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			JSONRPC      string `json:"jsonrpc"`
			ConnectionID *string
			Params       struct {
				TabID  int    `json:"tabId"`
				Method string `json:"method"`
				Params struct {
					Timestamp int `json:"timestamp"`
				} `json:"params"`
			} `json:"params"`
		}
		unmarshal(t, data, &ev)
		if ev.JSONRPC != "2.0" || ev.ConnectionID != nil || ev.Params.Method != "Page.loadEventFired" || ev.Params.Params.Timestamp != stamp {
			t.Fatalf("event %s, want Page.loadEventFired %d as a JSON-RPC notification", data, stamp)
		}
		if other != nil {
			mustCall(t, other, "getTabs", nil)
			if data, _ := other.take(func(m message) bool { return m.Method == "forwardCDPEvent" }); data != nil {
				t.Fatalf("the other client got %s", data)
			}
		}
	}
	if err := s.ext.ForwardCDPEvent(tabA, "Page.loadEventFired", map[string]any{"timestamp": 1}); err != nil {
		t.Fatal(err)
	}
	heardOnly(a, b, 1)
	if err := s.ext.ForwardCDPEvent(tabB, "Page.loadEventFired", map[string]any{"timestamp": 2}); err != nil {
		t.Fatal(err)
	}
	heardOnly(b, a, 2)

	// A tab A selected (the first tab) becomes A's too.
	mustCall(t, a, "selectTab", map[string]any{"tabIndex": 0})
	if err := s.ext.ForwardCDPEvent(1, "Page.loadEventFired", map[string]any{"timestamp": 3}); err != nil {
		t.Fatal(err)
	}
	heardOnly(a, b, 3)

	// By connectionId, whatever the tab.
	if err := s.ext.Send(`{"method":"forwardCDPEvent","connectionId":"` + connA + `","params":{"tabId":` + fmt.Sprint(tabB) +
		`,"method":"Page.loadEventFired","params":{"timestamp":4}}}`); err != nil {
		t.Fatal(err)
	}
	heardOnly(a, b, 4)

	// A tab nobody holds: everyone connected.
	if err := s.ext.ForwardCDPEvent(99, "Page.loadEventFired", map[string]any{"timestamp": 5}); err != nil {
		t.Fatal(err)
	}
	heardOnly(a, nil, 5)
	heardOnly(b, nil, 5)
}

// The extension closing: both clients hear "disconnected" for their own
// connection, a request in flight gets no answer, and the next fails.
func TestLegacyExtensionCloseTellsClients(t *testing.T) {
	s := newLegacySetup(t)
	a, connA := s.client(t, "a")
	b, connB := s.client(t, "b")
	s.ext.Handle("getTabs", func(context.Context, json.RawMessage) (any, error) { return nil, ErrNoResponse })
	if err := a.send(`{"jsonrpc":"2.0","id":"held","method":"getTabs","params":{}}`); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return len(forwarded(t, s.ext)) == 1 }, "waiting for the request to reach the extension")
	s.ext.Disconnect()
	for _, c := range []struct {
		rc     *rpcClient
		connID string
	}{{a, connA}, {b, connB}} {
		var p struct {
			ConnectionID string `json:"connection_id"`
			Reason       string `json:"reason"`
		}
		unmarshal(t, awaitNotification(t, c.rc, "disconnected"), &p)
		if p.ConnectionID != c.connID || p.Reason == "" {
			t.Fatalf("disconnected %+v, want connection %s", p, c.connID)
		}
		wantCode(t, callErr(t, c.rc, "getTabs", nil), -32000, "Not connected to an extension")
	}
	if data, _ := a.take(func(m message) bool { return string(m.ID) == `"held"` }); data != nil {
		t.Fatalf("the request in flight was answered %s", data)
	}
	if res := mustCall(t, a, "list_extensions", nil); string(res) != `{"extensions":[]}` {
		t.Fatalf("list after close: %s", res)
	}
}

// An MCP client going away: the extension hears "disconnected" with the
// connectionId, and lets go of that client's tab.
func TestLegacyClientCloseTellsExtension(t *testing.T) {
	s := newLegacySetup(t)
	a, connA := s.client(t, "a")
	mustCall(t, a, "createTab", nil)
	a.close()
	testenv.Eventually(t, 5*time.Second, func() bool {
		for _, n := range s.ext.Notifications() {
			var m struct {
				Method       string `json:"method"`
				ConnectionID string `json:"connectionId"`
			}
			_ = json.Unmarshal(n, &m)
			if m.Method == "disconnected" && m.ConnectionID == connA {
				return true
			}
		}
		return false
	}, "waiting for the extension to hear of it")
	// the tab it held is free: another client may select it
	b, _ := s.client(t, "b")
	mustCall(t, b, "selectTab", map[string]any{"tabIndex": 1})
}

// The same browser (by client_id) on a new socket takes the old one's
// place: its clients keep their connections, and their next requests go
// to the new socket with the same connectionId.
func TestLegacyExtensionReplacesItsSocket(t *testing.T) {
	s := newLegacySetup(t)
	a, connA := s.client(t, "a")
	mustCall(t, a, "getTabs", nil)
	twin := NewExtension(Legacy, "Chrome 141")
	twin.clientID = s.ext.clientID
	t.Cleanup(twin.Close)
	if err := twin.Connect(testCtx(t), s.r.ExtensionURL(), ""); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return !s.ext.Connected() }, "waiting for the relay to drop the old socket")
	if exts := s.r.Extensions(); len(exts) != 1 || exts[0].ID != s.extID {
		t.Fatalf("extensions %+v, want the one id %s", exts, s.extID)
	}
	mustCall(t, a, "createTab", nil)
	got := forwarded(t, twin)
	if len(got) != 1 || got[0].Method != "createTab" || got[0].ConnectionID != connA {
		t.Fatalf("the new socket got %+v, want createTab on %s", got, connA)
	}
	if data, _ := a.take(func(m message) bool { return m.Method == "disconnected" }); data != nil {
		t.Fatalf("the client was told %s", data)
	}
}
