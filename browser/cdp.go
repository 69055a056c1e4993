package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// noTab recognises the extensions' "attach a tab first" errors (v1.5: "No
// tab is connected", v1.9: "No tab attached"), a tab that went ("No tab
// with given id"), and Chrome's own "Debugger is not attached to the tab"
// (v1.5 after it refused to automate a tab it had opened: the connection
// points at that tab, with no debugger on it).
func noTab(err error) bool {
	if err == nil {
		return false
	}
	m := strings.ToLower(err.Error())
	for _, s := range []string{"no tab is connected", "no tab attached", "no tab with given id", "debugger is not attached to the tab"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// ensureTab makes sure a tab is attached for CDP commands: the one
// attached, or the one this client last worked in. It never opens a tab
// (a blank one is useless, and the v1.5 extension refuses to automate
// about:blank) nor takes one of the user's own without being asked: with
// neither it returns an error wrapping [ErrNoTab], and browser_navigate
// opens a tab at its URL.
func (c *Client) ensureTab(ctx context.Context) error {
	s, err := c.socketReady(ctx)
	if err != nil {
		return err
	}
	ext, err := c.ensureExtension(ctx, s)
	if err != nil {
		return err
	}
	c.mu.Lock()
	attached, last := ext.attached, c.lastTab
	c.mu.Unlock()
	if attached {
		return nil
	}
	if last == "" {
		return errNoTab
	}
	err = c.reattach(ctx, last)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errTabGone) {
		return fmt.Errorf("%w; taking back the tab it worked in failed: %v", errNoTab, err)
	}
	c.mu.Lock()
	if c.lastTab == last {
		c.lastTab = ""
	}
	c.mu.Unlock()
	return errNoTab
}

// reattach takes back the tab this client last worked in, when a new
// connection (a relay restart, another mcpx taking the relay over) has
// lost the extension's note of it: the model's page is still there.
func (c *Client) reattach(ctx context.Context, tabID string) error {
	tabs, err := getTabs(ctx, c)
	if err != nil {
		return err
	}
	for i, t := range tabs {
		if string(t.ID) != tabID {
			continue
		}
		if t.Index != nil {
			i = *t.Index
		}
		ext, res, err := c.call(ctx, "selectTab", map[string]any{"tabIndex": i, "activate": false, "stealth": true})
		if err != nil {
			return err
		}
		if got := tabIDOf(res); got != tabID {
			return fmt.Errorf("selectTab %d answered tab %s, not %s", i, got, tabID)
		}
		c.attach(ext, res)
		c.opts.Logger.Info("browser: took back the tab this client worked in", "tab", tabID)
		return nil
	}
	return errTabGone
}

var errTabGone = errors.New("the tab is gone")

// attach records that ext has the tab a createTab or selectTab answer
// names attached, and remembers the tab.
func (c *Client) attach(ext *extension, res json.RawMessage) {
	id := tabIDOf(res)
	c.mu.Lock()
	defer c.mu.Unlock()
	ext.attached = true
	if id != "" {
		if id != c.lastTab {
			c.moves++
		}
		c.lastTab = id
		c.noteWorked(id)
	}
}

// detach records that ext lost its tab (closed, or gone).
func (c *Client) detach(ext *extension) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ext.attached = false
	c.lastTab = ""
	c.moves++
}

// tabIDOf reads the tab id from a createTab or selectTab answer: {tab:{id}}
// from real extensions, {tabId} as the MCP Proxy Protocol 1.0 shows it.
func tabIDOf(res json.RawMessage) string {
	var r struct {
		Tab *struct {
			ID json.RawMessage `json:"id"`
		} `json:"tab"`
		TabID json.RawMessage `json:"tabId"`
	}
	if json.Unmarshal(res, &r) != nil {
		return ""
	}
	if r.Tab != nil && len(r.Tab.ID) > 0 {
		return string(r.Tab.ID)
	}
	return string(r.TabID)
}

// Tab is a browser tab as getTabs and createTab describe it.
type Tab struct {
	ID          json.RawMessage `json:"id"`
	Title       string          `json:"title"`
	URL         string          `json:"url"`
	Active      bool            `json:"active"`
	Index       *int            `json:"index"`
	Automatable *bool           `json:"automatable"`
}

// UnmarshalJSON reads a tab leniently: v1.5 computes automatable as
// `tab.url && ...`, which is "" (not false) for a tab that has no URL
// yet, one that is still opening; one such tab must not make the whole
// getTabs answer unreadable.
func (t *Tab) UnmarshalJSON(data []byte) error {
	type plain Tab
	var v struct {
		plain
		Automatable json.RawMessage `json:"automatable"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*t = Tab(v.plain)
	switch a := strings.TrimSpace(string(v.Automatable)); a {
	case "", "null":
	case "true", "false":
		b := a == "true"
		t.Automatable = &b
	default: // "" or another falsy value: not automatable
		b := false
		t.Automatable = &b
	}
	return nil
}

// CreateTab opens a tab at url and attaches it. Real extensions answer
// {tab:{id,...}}; the {tabId,url} of the MCP Proxy Protocol 1.0 is accepted
// too. When the extension refuses (v1.5 refuses about:, chrome: and
// extension pages, after opening the tab), the tab it left is closed.
func (c *Client) CreateTab(ctx context.Context, url string, activate bool) (Tab, error) {
	res, err := c.createTab(ctx, url, map[string]any{"url": url, "activate": activate})
	if err != nil {
		return Tab{}, err
	}
	var r struct {
		Tab   *Tab            `json:"tab"`
		TabID json.RawMessage `json:"tabId"`
		URL   string          `json:"url"`
	}
	_ = json.Unmarshal(res, &r)
	t := Tab{ID: r.TabID, URL: r.URL}
	if r.Tab != nil {
		t = *r.Tab
	}
	return t, nil
}

// CDP sends one Chrome DevTools Protocol command to the attached tab, or
// to the tab this client last worked in. With neither it is an error
// wrapping [ErrNoTab]: it opens no tab of its own accord.
func (c *Client) CDP(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = struct{}{}
	}
	if err := c.ensureTab(ctx); err != nil {
		return nil, err
	}
	req := map[string]any{"method": method, "params": params}
	ext, res, err := c.call(ctx, "forwardCDPCommand", req)
	if noTab(err) {
		// The extension lost the tab (closed by the user, say): take back
		// the one this client worked in, if it is still there, and try
		// once more.
		if ext != nil {
			c.unattach(ext)
		}
		if err := c.ensureTab(ctx); err != nil {
			return nil, err
		}
		_, res, err = c.call(ctx, "forwardCDPCommand", req)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return res, nil
}

// evalResult is what Runtime.evaluate answers.
type evalResult struct {
	Result struct {
		Type        string          `json:"type"`
		Value       json.RawMessage `json:"value"`
		Description string          `json:"description"`
	} `json:"result"`
	ExceptionDetails *struct {
		Text      string `json:"text"`
		Exception *struct {
			Description string `json:"description"`
		} `json:"exception"`
	} `json:"exceptionDetails"`
}

// Eval evaluates a JavaScript expression in the page and returns its
// value as JSON. A thrown exception is an error with its message.
func (c *Client) Eval(ctx context.Context, expr string) (json.RawMessage, error) {
	res, err := c.CDP(ctx, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true, "userGesture": true,
	})
	if err != nil {
		return nil, err
	}
	return decodeEval(res)
}

// decodeEval reads a Runtime.evaluate answer: the value as JSON, or the
// exception the page threw as a *PageError.
func decodeEval(res json.RawMessage) (json.RawMessage, error) {
	var r evalResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("Runtime.evaluate: unexpected answer: %s", truncate(string(res), 200))
	}
	if d := r.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		return nil, &PageError{Message: msg}
	}
	if len(r.Result.Value) == 0 {
		if r.Result.Type == "undefined" || r.Result.Type == "" {
			return json.RawMessage("null"), nil
		}
		// Not serializable by value (a DOM node, a function): describe it.
		b, _ := json.Marshal(r.Result.Description)
		return b, nil
	}
	return r.Result.Value, nil
}

// PageError is an exception thrown by JavaScript in the page.
type PageError struct{ Message string }

func (e *PageError) Error() string { return "the page threw: " + e.Message }

// evalInto evaluates expr and decodes the value into v.
func (c *Client) evalInto(ctx context.Context, expr string, v any) error {
	raw, err := c.Eval(ctx, expr)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("unexpected value from the page: %s", truncate(string(raw), 200))
	}
	return nil
}

// waitLoaded polls document.readyState until "complete" (or timeout).
// Navigation may briefly break evaluation; that is retried.
func (c *Client) waitLoaded(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		var state string
		err := c.evalInto(ctx, "document.readyState", &state)
		if err == nil && state == "complete" {
			return nil
		}
		var pe *PageError
		if err != nil && !errors.As(err, &pe) && ctx.Err() != nil {
			return err
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if last != nil {
		return fmt.Errorf("the page did not finish loading within %s: %w", timeout, last)
	}
	return fmt.Errorf("the page did not finish loading within %s", timeout)
}
