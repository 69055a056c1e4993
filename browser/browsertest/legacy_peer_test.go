package browsertest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func newLegacyRelay(t *testing.T) *LegacyRelay {
	t.Helper()
	r := NewLegacyRelay()
	t.Cleanup(r.Close)
	return r
}

// dialLegacy dials r and sends the legacy handshake.
func dialLegacy(t *testing.T, r *LegacyRelay) *rpcClient {
	t.Helper()
	rc, err := dialRPC(testCtx(t), r.MCPURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.close)
	if err := rc.send(`{"method":"mcp_handshake","params":{"projectName":"test"}}`); err != nil {
		t.Fatal(err)
	}
	return rc
}

// ask sends v and returns the next answer (a frame without a method),
// checking that it carries neither an id nor "jsonrpc".
func ask(t *testing.T, rc *rpcClient, v any) map[string]json.RawMessage {
	t.Helper()
	if err := rc.send(v); err != nil {
		t.Fatal(err)
	}
	data, err := rc.await(testCtx(t), func(m message) bool { return m.Method == "" })
	if err != nil {
		t.Fatal(err)
	}
	var frame map[string]json.RawMessage
	unmarshal(t, data, &frame)
	if _, ok := frame["id"]; ok {
		t.Fatalf("answer %s has an id", data)
	}
	if _, ok := frame["jsonrpc"]; ok {
		t.Fatalf("answer %s has jsonrpc", data)
	}
	return frame
}

// connectLegacy connects rc and returns the connection id.
func connectLegacy(t *testing.T, r *LegacyRelay, rc *rpcClient, params map[string]any) string {
	t.Helper()
	if params == nil {
		params = map[string]any{"extensionId": r.ExtensionID()}
	}
	frame := ask(t, rc, map[string]any{"method": "connect", "params": params})
	var res struct {
		Success      bool   `json:"success"`
		ConnectionID string `json:"connectionId"`
	}
	unmarshal(t, mustJSON(frame), &res)
	if !res.Success || !strings.HasPrefix(res.ConnectionID, "conn-") || len(frame) != 2 {
		t.Fatalf("connect: %s", mustJSON(frame))
	}
	return res.ConnectionID
}

// legacyResult asks method on connection conn and returns the result,
// failing on an error or another connection's answer.
func legacyResult(t *testing.T, rc *rpcClient, conn, method string, params any) json.RawMessage {
	t.Helper()
	frame := ask(t, rc, map[string]any{"method": method, "params": params, "connectionId": conn})
	if string(frame["connectionId"]) != string(mustJSON(conn)) || frame["result"] == nil || len(frame) != 2 {
		t.Fatalf("%s: %s, want {connectionId: %s, result}", method, mustJSON(frame), conn)
	}
	return frame["result"]
}

// legacyError asks method on conn and returns the error string.
func legacyError(t *testing.T, rc *rpcClient, conn, method string, params any) string {
	t.Helper()
	frame := ask(t, rc, map[string]any{"method": method, "params": params, "connectionId": conn})
	var msg string
	if string(frame["connectionId"]) != string(mustJSON(conn)) || json.Unmarshal(frame["error"], &msg) != nil || len(frame) != 2 {
		t.Fatalf("%s: %s, want {connectionId: %s, error: string}", method, mustJSON(frame), conn)
	}
	return msg
}

func TestLegacyRelaySession(t *testing.T) {
	r := newLegacyRelay(t)
	rc := dialLegacy(t, r)
	// The handshake has no answer: the first answer is the list's.
	list := ask(t, rc, `{"method":"list_extensions","params":{}}`)
	want := `{"extensions":[{"connected":true,"id":"` + r.ExtensionID() + `","name":"Chrome 141"}]}`
	if string(mustJSON(list)) != want {
		t.Fatalf("list %s, want %s", mustJSON(list), want)
	}
	conn := connectLegacy(t, r, rc, nil)

	var tabs struct {
		Tabs []struct {
			ID    int    `json:"id"`
			Title string `json:"title"`
		} `json:"tabs"`
	}
	unmarshal(t, legacyResult(t, rc, conn, "getTabs", map[string]any{}), &tabs)
	if len(tabs.Tabs) != 4 || tabs.Tabs[1].Title != "Example Domain" || tabs.Tabs[3].ID != 4 {
		t.Fatalf("tabs %s: want the three tabs and connect's new one", mustJSON(tabs))
	}
	eval := func(expr string) json.RawMessage {
		var v struct {
			Result json.RawMessage `json:"result"`
		}
		unmarshal(t, legacyResult(t, rc, conn, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": expr})), &v)
		return v.Result
	}
	if got := string(eval("location.href")); got != `{"type":"string","value":"about:blank"}` {
		t.Fatalf("the new tab's location: %s", got)
	}
	if tabOf(t, legacyResult(t, rc, conn, "selectTab", map[string]any{"tabIndex": 1})) != 2 {
		t.Fatal("selectTab 1 is not tab 2")
	}
	for expr, want := range map[string]string{
		"document.title": `{"type":"string","value":"Example Domain"}`,
		"42":             `{"description":"42","type":"number","value":42}`,
		`"hi"`:           `{"type":"string","value":"hi"}`,
		"true":           `{"type":"boolean","value":true}`,
	} {
		if got := string(eval(expr)); got != want {
			t.Errorf("evaluate %s: %s, want %s", expr, got, want)
		}
	}
	tab := tabOf(t, legacyResult(t, rc, conn, "createTab", map[string]any{"url": "http://docs.test/"}))
	if got := string(eval("document.title")); got != `{"type":"string","value":"Docs"}` {
		t.Fatalf("title after createTab: %s", got)
	}
	if res := legacyResult(t, rc, conn, "closeTab", map[string]any{}); string(res) != `{"closedAttachedTab":true,"success":true}` {
		t.Fatalf("closeTab: %s", res)
	}
	for _, tb := range r.Extension().Tabs() {
		if tb.ID == tab {
			t.Fatalf("tab %d is still open", tab)
		}
	}
	if msg := legacyError(t, rc, conn, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "1"})); msg != "No tab attached" {
		t.Fatalf("evaluate after closeTab: %q", msg)
	}

	var methods []string
	for _, f := range r.Frames() {
		var m legacyMsg
		unmarshal(t, f.Data, &m)
		methods = append(methods, m.Method)
		if f.Side != SideMCP || f.Conn != "mcp#1" {
			t.Errorf("frame %+v", f)
		}
	}
	if got := strings.Join(methods[:4], " "); got != "mcp_handshake list_extensions connect getTabs" {
		t.Fatalf("frames %q", methods)
	}
}

func TestLegacyRelayRefusals(t *testing.T) {
	r := newLegacyRelay(t)
	rc, err := dialRPC(testCtx(t), r.MCPURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.close)
	failure := func(v any, want string) {
		t.Helper()
		frame := ask(t, rc, v)
		if string(mustJSON(frame)) != `{"error":"`+want+`","success":false}` {
			t.Fatalf("%v: %s, want the failure %q", v, mustJSON(frame), want)
		}
	}
	failure(`{"method":"list_extensions"}`, "send mcp_handshake first")
	if err := rc.send(`{"method":"mcp_handshake","params":{"projectName":"p"}}`); err != nil {
		t.Fatal(err)
	}
	failure(`{"method":"getTabs","params":{}}`, "missing connectionId")
	failure(`{"method":"connect","params":{"extensionId":"ext-nope"}}`, "Extension not found")
	failure(`{"method":"connect","params":{"extensionId":"`+r.ExtensionID()+`","tabId":99}}`, "Tab 99 not found")

	// extension_id is accepted, and tabId picks the tab
	conn := connectLegacy(t, r, rc, map[string]any{"extension_id": r.ExtensionID(), "tabId": 3})
	var v struct{ Result struct{ Value string } }
	unmarshal(t, legacyResult(t, rc, conn, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "document.title"})), &v)
	if v.Result.Value != "Docs" {
		t.Fatalf("connected to tab 3, title %q", v.Result.Value)
	}
	other := dialLegacy(t, r)
	frame := ask(t, other, map[string]any{"method": "connect", "params": map[string]any{"extensionId": r.ExtensionID(), "tabId": 3}})
	if string(frame["success"]) != "false" {
		t.Fatalf("a second connection to tab 3: %s", mustJSON(frame))
	}
	// A connection of another socket is not found.
	if msg := legacyError(t, other, conn, "getTabs", map[string]any{}); msg != "Connection not found: "+conn {
		t.Fatalf("another socket's connection: %q", msg)
	}
	if msg := legacyError(t, rc, conn, "forwardCDPCommand", cdp("Nope.nope", nil)); !strings.Contains(msg, "wasn't found") {
		t.Fatalf("unknown CDP method: %q", msg)
	}
	if msg := legacyError(t, rc, conn, "browser_navigate", map[string]any{}); msg != "Unknown command: browser_navigate" {
		t.Fatalf("unknown method: %q", msg)
	}
}

// DropExtension: every connected client is told, a request in flight gets
// no other answer, the old connection is gone, and connecting again
// works.
func TestLegacyRelayDropExtension(t *testing.T) {
	r := newLegacyRelay(t)
	held := make(chan struct{})
	r.Extension().Handle("getTabs", func(ctx context.Context, _ json.RawMessage) (any, error) {
		close(held)
		<-ctx.Done()
		return map[string]any{"tabs": []any{}}, nil // too late: the connection is gone
	})
	a, b := dialLegacy(t, r), dialLegacy(t, r)
	connA, connB := connectLegacy(t, r, a, nil), connectLegacy(t, r, b, nil)
	if err := a.send(map[string]any{"method": "getTabs", "params": map[string]any{}, "connectionId": connA}); err != nil {
		t.Fatal(err)
	}
	<-held
	r.DropExtension()
	for _, c := range []struct {
		rc   *rpcClient
		conn string
	}{{a, connA}, {b, connB}} {
		data, err := c.rc.await(testCtx(t), func(m message) bool { return m.Method == "" })
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"connectionId":"` + c.conn + `","error":"Extension disconnected"}`; string(data) != want {
			t.Fatalf("got %s, want %s", data, want)
		}
	}
	r.Extension().Handle("getTabs", nil)
	if msg := legacyError(t, a, connA, "getTabs", map[string]any{}); msg != "Connection not found: "+connA {
		t.Fatalf("the old connection: %q", msg)
	}
	if n := len(r.Connections()); n != 0 {
		t.Fatalf("%d connections after the drop", n)
	}
	list := ask(t, a, `{"method":"list_extensions","params":{}}`)
	if !strings.Contains(string(list["extensions"]), r.ExtensionID()) {
		t.Fatalf("list after the drop: %s", mustJSON(list))
	}
	conn := connectLegacy(t, r, a, nil)
	legacyResult(t, a, conn, "getTabs", map[string]any{})

	r.SetExtensionAvailable(false)
	if _, err := a.await(testCtx(t), func(m message) bool { return m.Method == "" }); err != nil { // told again
		t.Fatal(err)
	}
	if list := ask(t, a, `{"method":"list_extensions","params":{}}`); string(list["extensions"]) != "[]" {
		t.Fatalf("list without the extension: %s", mustJSON(list))
	}
	r.SetExtensionAvailable(true)
	connectLegacy(t, r, a, nil)
}

func TestLegacyRelayEvents(t *testing.T) {
	r := newLegacyRelay(t)
	a, b := dialLegacy(t, r), dialLegacy(t, r)
	connA := connectLegacy(t, r, a, map[string]any{"extensionId": r.ExtensionID(), "tabId": 2})
	connectLegacy(t, r, b, map[string]any{"extensionId": r.ExtensionID(), "tabId": 3})
	r.ForwardCDPEvent(2, "Page.loadEventFired", map[string]any{"timestamp": 1})
	data, err := a.await(testCtx(t), func(m message) bool { return m.Method == "forwardCDPEvent" })
	if err != nil {
		t.Fatal(err)
	}
	want := `{"connectionId":"` + connA + `","method":"forwardCDPEvent","params":{"method":"Page.loadEventFired","params":{"timestamp":1},"tabId":2}}`
	if string(data) != want {
		t.Fatalf("event %s, want %s", data, want)
	}
	ask(t, b, `{"method":"list_extensions","params":{}}`) // ordered behind the event
	if data, _ := b.take(func(m message) bool { return m.Method == "forwardCDPEvent" }); data != nil {
		t.Fatalf("b got %s", data)
	}
	// a tab nobody holds: everyone
	r.ForwardCDPEvent(1, "Page.loadEventFired", nil)
	for _, rc := range []*rpcClient{a, b} {
		if _, err := rc.await(testCtx(t), func(m message) bool { return m.Method == "forwardCDPEvent" }); err != nil {
			t.Fatal(err)
		}
	}
}
