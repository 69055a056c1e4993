package browsertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"
	"github.com/mcpx/mcpx/jsonrpc"
)

// record notes a request the extension got.
func (e *Extension) record(data json.RawMessage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.received = append(e.received, data)
}

// notify handles a notification from the relay.
func (e *Extension) notify(s *extSocket, m message, data json.RawMessage) {
	var p struct {
		ExtensionID  string `json:"extension_id"`
		ConnectionID string `json:"connection_id"`
	}
	_ = json.Unmarshal(m.Params, &p)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notes = append(e.notes, data)
	switch m.Method {
	case "authenticated":
		e.id = p.ExtensionID
		select {
		case <-s.authed:
		default:
			close(s.authed)
		}
	case "disconnected": // v1.5 detaches that connection's tab
		delete(e.attached, p.ConnectionID)
	}
}

// credentials is the answer to the relay's authenticate.
func (e *Extension) credentials(token string) map[string]any {
	res := map[string]any{"name": e.name, "access_token": token, "client_id": e.clientID}
	if e.dialect == V15 {
		res["currentTab"] = nil
	} else {
		res["buildTimestamp"] = "2025-11-01T00:00:00.000Z"
	}
	return res
}

// serve answers one forwarded request.
func (e *Extension) serve(s *extSocket, m message) {
	defer e.wg.Done()
	res, err := e.call(s.Ctx, connectionOf(m.ID), m.Method, m.Params)
	switch {
	case errors.Is(err, ErrNoResponse):
	case err != nil:
		_ = s.Send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": e.wireError(err)})
	default:
		_ = s.Send(rpcwire.Response(m.ID, res))
	}
}

// readLegacy handles one message from the relay to a legacy extension:
// a request is whatever carries a connectionId (and is not the relay's
// "disconnected" about it); the relay's authenticate means nothing to
// this dialect and gets no answer.
func (e *Extension) readLegacy(s *extSocket, m message, data json.RawMessage) {
	var r struct {
		ConnectionID string `json:"connectionId"`
	}
	_ = json.Unmarshal(data, &r)
	switch {
	case m.Method == "":
	case m.Method == "authenticate" && r.ConnectionID == "":
		e.record(data)
	case r.ConnectionID == "" || m.Method == "disconnected":
		e.notify(s, m, data)
	default:
		e.record(data)
		e.wg.Add(1) // this reader holds the count above zero
		if e.custom(m) {
			go e.serveLegacy(s, r.ConnectionID, m)
		} else {
			e.serveLegacy(s, r.ConnectionID, m)
		}
	}
}

// custom reports whether a handler of Handle answers m.
func (e *Extension) custom(m message) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m.Method != "forwardCDPCommand" {
		return e.handlers[m.Method] != nil
	}
	var p struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return e.handlers["forwardCDPCommand:"+p.Method] != nil || e.handlers["forwardCDPCommand"] != nil
}

// serveLegacy answers one request of connection conn as the legacy protocol
// does: no id, no "jsonrpc", the connectionId it came with.
func (e *Extension) serveLegacy(s *extSocket, conn string, m message) {
	defer e.wg.Done()
	res, err := e.call(s.Ctx, conn, m.Method, m.Params)
	switch {
	case errors.Is(err, ErrNoResponse):
	case err != nil:
		_ = s.Send(map[string]any{"connectionId": conn, "error": e.wireError(err)})
	default:
		_ = s.Send(map[string]any{"connectionId": conn, "result": res})
	}
}

// connectionOf returns the relay connection a request id belongs to: the
// text before the first colon, or "" in direct mode (a plain id).
func connectionOf(id json.RawMessage) string {
	c, _, ok := strings.Cut(jsonrpc.IDKey(id), ":")
	if !ok {
		return ""
	}
	return c
}

// fail is an error in the dialect's shape.
func (e *Extension) fail(format string, args ...any) *Error {
	switch e.dialect {
	case V19:
		return MessageStack.Errorf(format, args...)
	case Legacy:
		return BareString.Errorf(format, args...)
	}
	return CodeMessage.Errorf(format, args...)
}

func (e *Extension) wireError(err error) any {
	var we *Error
	if errors.As(err, &we) {
		return we.wire()
	}
	return e.fail("%s", err.Error()).wire()
}

// call runs a handler or the built-in method.
func (e *Extension) call(ctx context.Context, conn, method string, params json.RawMessage) (any, error) {
	var res any
	var err error
	if method == "forwardCDPCommand" {
		res, err = e.forwardCDP(ctx, conn, params)
	} else {
		e.mu.Lock()
		h := e.handlers[method]
		e.mu.Unlock()
		if h != nil {
			res, err = h(ctx, params)
		} else {
			res, err = e.builtin(conn, method, params)
		}
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = map[string]any{}
	}
	if e.dialect == V15 {
		res = e.withCurrentTab(conn, res)
	}
	return res, nil
}

// withCurrentTab merges v1.5's currentTab field into an object result.
func (e *Extension) withCurrentTab(conn string, res any) any {
	data, err := json.Marshal(res)
	if err != nil {
		return res
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return res
	}
	if _, ok := obj["currentTab"]; !ok {
		e.mu.Lock()
		cur := e.currentTabLocked(conn)
		e.mu.Unlock()
		obj["currentTab"], _ = json.Marshal(cur)
	}
	return obj
}

// currentTabLocked is the tab attached for conn, as v1.5 reports it.
func (e *Extension) currentTabLocked(conn string) any {
	id, ok := e.attached[conn]
	if !ok {
		return nil
	}
	i := e.indexLocked(id)
	if i < 0 {
		return nil
	}
	t := e.tabs[i]
	return map[string]any{"id": t.ID, "title": t.Title, "url": t.URL, "index": i}
}

func (e *Extension) indexLocked(tabID int) int {
	for i, t := range e.tabs {
		if t.ID == tabID {
			return i
		}
	}
	return -1
}

// builtin answers the methods real extensions implement.
func (e *Extension) builtin(conn, method string, params json.RawMessage) (any, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch method {
	case "getTabs":
		return e.getTabsLocked(), nil
	case "createTab":
		return e.createTabLocked(conn, params)
	case "selectTab":
		return e.selectTabLocked(conn, params)
	case "getConsoleMessages":
		return map[string]any{"messages": []any{}}, nil
	case "closeTab":
		if e.dialect != V15 {
			return e.closeTabLocked(conn, params)
		}
	}
	if e.dialect != V15 {
		return nil, e.fail("Unknown command: %s", method)
	}
	return map[string]any{}, nil // v1.5: a silent success that does nothing
}

func (e *Extension) getTabsLocked() any {
	tabs := make([]map[string]any, len(e.tabs))
	for i, t := range e.tabs {
		tabs[i] = map[string]any{
			"id": t.ID, "title": t.Title, "url": t.URL, "active": t.ID == e.active,
			"windowId": 1, "index": i, "automatable": !strings.HasPrefix(t.URL, "chrome://"),
		}
		if e.dialect == V15 {
			tabs[i]["windowFocused"] = true
		}
	}
	if e.dialect == V15 {
		return map[string]any{"tabs": tabs, "count": len(tabs), "focusedWindowId": 1, "ourExtensionId": "test"}
	}
	return map[string]any{"tabs": tabs}
}

// v15Refuses reports whether v1.5's createTab refuses to automate url:
// it checks only after opening the tab.
func v15Refuses(url string) bool {
	for _, scheme := range []string{"chrome:", "edge:", "devtools:", "chrome-extension:", "about:"} {
		if strings.HasPrefix(url, scheme) {
			return true
		}
	}
	return false
}

func (e *Extension) createTabLocked(conn string, params json.RawMessage) (any, error) {
	p := struct {
		URL      string `json:"url"`
		Activate *bool  `json:"activate"`
	}{}
	_ = json.Unmarshal(params, &p)
	if p.URL == "" {
		p.URL = "about:blank"
	}
	activate := p.Activate == nil || *p.Activate
	t := &Tab{ID: e.nextTab, URL: p.URL, Title: e.pages[p.URL]}
	e.nextTab++
	e.tabs = append(e.tabs, t)
	e.attached[conn] = t.ID
	if activate {
		e.active = t.ID
	}
	if e.dialect == V15 && v15Refuses(p.URL) {
		// The tab stays open and the connection points at it, with no
		// debugger attached.
		e.bare[t.ID] = true
		return nil, e.fail("Cannot automate tab with URL: %s", p.URL)
	}
	if e.dialect == V15 { // v1.5 answers before the page has a title
		return map[string]any{"success": true, "activated": activate,
			"tab": map[string]any{"id": t.ID, "title": "", "url": t.URL}}, nil
	}
	return map[string]any{"tab": map[string]any{"id": t.ID, "title": t.Title, "url": t.URL, "techStack": nil}}, nil
}

func (e *Extension) selectTabLocked(conn string, params json.RawMessage) (any, error) {
	p := struct {
		TabIndex *int `json:"tabIndex"`
		Activate bool `json:"activate"`
	}{}
	_ = json.Unmarshal(params, &p)
	if p.TabIndex == nil {
		return nil, e.fail("tabIndex is required")
	}
	i := *p.TabIndex
	if i < 0 || i >= len(e.tabs) {
		return nil, e.fail("Tab index %d out of range (0-%d)", i, len(e.tabs)-1)
	}
	t := e.tabs[i]
	if strings.HasPrefix(t.URL, "chrome://") {
		return nil, e.fail("Cannot automate %s pages", t.URL)
	}
	for c, id := range e.attached {
		if id == t.ID && c != conn {
			return nil, e.fail("Tab %d is already attached to another connection", i)
		}
	}
	e.attached[conn] = t.ID
	delete(e.bare, t.ID)
	if p.Activate {
		e.active = t.ID
	}
	return map[string]any{"success": true, "activated": p.Activate,
		"tab": map[string]any{"id": t.ID, "title": t.Title, "url": t.URL, "index": i}}, nil
}

// closeTabLocked is v1.9's closeTab {index?}.
func (e *Extension) closeTabLocked(conn string, params json.RawMessage) (any, error) {
	p := struct {
		Index *int `json:"index"`
	}{}
	_ = json.Unmarshal(params, &p)
	var id int
	if p.Index != nil {
		if *p.Index < 0 || *p.Index >= len(e.tabs) {
			return nil, e.fail("Tab index %d out of range", *p.Index)
		}
		id = e.tabs[*p.Index].ID
	} else {
		var ok bool
		if id, ok = e.attached[conn]; !ok {
			return nil, e.fail("No tab attached")
		}
	}
	closedAttached := e.attached[conn] == id
	e.removeTabLocked(id)
	return map[string]any{"success": true, "closedAttachedTab": closedAttached}, nil
}

func (e *Extension) removeTabLocked(id int) {
	if i := e.indexLocked(id); i >= 0 {
		e.tabs = append(e.tabs[:i], e.tabs[i+1:]...)
	}
	delete(e.bare, id)
	for c, t := range e.attached {
		if t == id {
			delete(e.attached, c)
		}
	}
}

// forwardCDP runs forwardCDPCommand {method, params} on the tab attached
// for conn.
func (e *Extension) forwardCDP(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(params, &p)
	e.mu.Lock()
	tabID, attached := e.attached[conn]
	h, inner := e.handlers["forwardCDPCommand:"+p.Method], true
	if h == nil {
		h, inner = e.handlers["forwardCDPCommand"], false
	}
	e.mu.Unlock()
	if !attached {
		if e.dialect != V15 {
			return nil, e.fail("No tab attached")
		}
		return nil, e.fail("No tab is connected")
	}
	switch {
	case h != nil && inner:
		return h(ctx, p.Params)
	case h != nil:
		return h(ctx, params)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	i := e.indexLocked(tabID)
	if i < 0 {
		return nil, e.fail("No tab with given id %d.", tabID)
	}
	if e.bare[tabID] {
		return nil, e.fail("Debugger is not attached to the tab with id: %d.", tabID)
	}
	return e.cdpLocked(e.tabs[i], p.Method, p.Params)
}

// cdpLocked is a tiny fake of the portable CDP methods.
func (e *Extension) cdpLocked(t *Tab, method string, params json.RawMessage) (any, error) {
	v19 := e.dialect == V19
	switch method {
	case "Runtime.evaluate":
		var p struct {
			Expression string `json:"expression"`
		}
		_ = json.Unmarshal(params, &p)
		if v, ok := literal(p.Expression); ok && e.dialect == Legacy {
			return map[string]any{"result": v}, nil
		}
		return map[string]any{"result": evaluate(t, p.Expression)}, nil
	case "Page.navigate":
		var p struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(params, &p)
		t.URL, t.Title = p.URL, e.pages[p.URL]
		if v19 {
			return map[string]any{"url": t.URL, "title": t.Title, "techStack": nil, "message": "Navigated to " + t.URL}, nil
		}
		return map[string]any{"frameId": fmt.Sprintf("F%d", t.ID), "loaderId": fmt.Sprintf("L%d", e.nextTab), "isDownload": false}, nil
	case "Page.captureScreenshot":
		var p struct {
			Format string `json:"format"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Format == "" && v19 {
			p.Format = "jpeg"
		}
		return map[string]any{"data": base64.StdEncoding.EncodeToString(screenshot(p.Format))}, nil
	case "Page.reload", "Input.dispatchMouseEvent", "Input.dispatchKeyEvent",
		"Emulation.setDeviceMetricsOverride", "Page.handleJavaScriptDialog":
		return map[string]any{}, nil
	case "Input.insertText":
		if !v19 {
			return map[string]any{}, nil
		}
	case "Page.close":
		if !v19 {
			e.removeTabLocked(t.ID)
			return map[string]any{}, nil
		}
	}
	if v19 {
		return nil, e.fail("Unsupported CDP method: %s", method)
	}
	return nil, e.fail(`{"code":-32601,"message":"'%s' wasn't found"}`, method)
}

// evaluate fakes Runtime.evaluate for a few expressions.
func evaluate(t *Tab, expr string) map[string]any {
	switch strings.TrimSuffix(strings.TrimSpace(expr), ";") {
	case "document.title":
		return map[string]any{"type": "string", "value": t.Title}
	case "location.href", "window.location.href", "document.location.href", "document.URL":
		return map[string]any{"type": "string", "value": t.URL}
	case "document.readyState":
		return map[string]any{"type": "string", "value": "complete"}
	}
	return map[string]any{"type": "undefined"}
}

// literal evaluates an expression that is a JSON literal (a number, a
// string in double quotes, true, false or null) to a CDP RemoteObject.
func literal(expr string) (map[string]any, bool) {
	var v any
	if json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimSpace(expr), ";")), &v) != nil {
		return nil, false
	}
	switch v := v.(type) {
	case float64:
		return map[string]any{"type": "number", "value": v, "description": fmt.Sprint(v)}, true
	case string:
		return map[string]any{"type": "string", "value": v}, true
	case bool:
		return map[string]any{"type": "boolean", "value": v}, true
	case nil:
		return map[string]any{"type": "object", "subtype": "null", "value": nil}, true
	}
	return nil, false // objects and arrays are not literals of JavaScript's
}

// screenshot is a small valid image: PNG, or JPEG when asked.
func screenshot(format string) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 12))
	for y := 0; y < 12; y++ {
		for x := 0; x < 16; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 16), uint8(y * 20), 200, 255})
		}
	}
	var b bytes.Buffer
	if format == "jpeg" {
		_ = jpeg.Encode(&b, img, nil)
	} else {
		_ = png.Encode(&b, img)
	}
	return b.Bytes()
}
