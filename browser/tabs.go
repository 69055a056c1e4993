package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// This file is the tab-level API that other packages build on (the page
// tools of browser/pagetools): which tab a client works in, the tabs the
// browser has, and evaluating in one given tab. It never opens a tab of
// its own accord.

// ErrNotAttachedTab is wrapped by [Client.EvalTab] when it may not select
// the tab and the client works in another one, or is about to: a call
// that may attach another tab (createTab, selectTab, closeTab) is under
// way. Nothing was evaluated.
var ErrNotAttachedTab = errors.New("not the tab this client works in")

// ErrTabMoved is wrapped by [Client.EvalTab] when a call that may attach
// another tab started while the expression was on its way: the extension
// may have run it in that other tab, so its value is not returned.
var ErrTabMoved = errors.New("the client moved to another tab while the expression ran")

// AttachedTab returns the id (as JSON text, e.g. "123") of the tab this
// client has attached for CDP commands, or "" when none is.
func (c *Client) AttachedTab() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ext == nil || !c.ext.attached {
		return ""
	}
	return c.lastTab
}

// Tabs returns the browser's tabs as getTabs lists them.
func (c *Client) Tabs(ctx context.Context) ([]Tab, error) { return getTabs(ctx, c) }

// SelectTab attaches the tab whose id is tabID (JSON text, as [Tab.ID])
// without activating it. It checks that the extension attached that very
// tab: getTabs and selectTab may count indexes differently.
func (c *Client) SelectTab(ctx context.Context, tabID string) error {
	if c.AttachedTab() == tabID {
		return nil
	}
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
			return fmt.Errorf("selectTab %d: %w", i, err)
		}
		c.attach(ext, res)
		if got := tabIDOf(res); got != tabID {
			return fmt.Errorf("selectTab %d answered tab %s, not %s", i, got, tabID)
		}
		return nil
	}
	return fmt.Errorf("tab %s is gone", tabID)
}

// EvalTab evaluates a JavaScript expression in the tab tabID and returns
// its value as JSON, as [Client.Eval] does. With sel it first attaches
// that tab when the client works in another; without, that is an error
// wrapping [ErrNotAttachedTab]. A tab that went is an error; no tab is
// opened in its place.
//
// The extension runs a command in whichever tab the connection has
// attached when the command arrives, and it attaches a new tab before its
// answer to createTab or selectTab is back. So EvalTab evaluates only
// when no such call is under way, and discards the value (an error
// wrapping [ErrTabMoved]) when one started meanwhile.
func (c *Client) EvalTab(ctx context.Context, tabID, expr string, sel bool) (json.RawMessage, error) {
	moves, steady := c.steadyOn(tabID)
	if !steady {
		if !sel {
			return nil, fmt.Errorf("tab %s: %w", tabID, ErrNotAttachedTab)
		}
		if err := c.SelectTab(ctx, tabID); err != nil {
			return nil, err
		}
		if moves, steady = c.steadyOn(tabID); !steady {
			return nil, fmt.Errorf("tab %s: %w", tabID, ErrTabMoved)
		}
	}
	ext, res, err := c.call(ctx, "forwardCDPCommand", map[string]any{"method": "Runtime.evaluate", "params": map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	}})
	if noTab(err) && ext != nil {
		c.detach(ext)
	}
	if err != nil {
		return nil, fmt.Errorf("Runtime.evaluate: %w", err)
	}
	if c.movedSince(moves) {
		return nil, fmt.Errorf("tab %s: %w", tabID, ErrTabMoved)
	}
	return decodeEval(res)
}

// movesTab reports whether method may attach another tab to the
// connection it comes on.
func movesTab(method string) bool {
	switch method {
	case "createTab", "selectTab", "closeTab":
		return true
	}
	return false
}

// beginMove notes a call that may attach another tab; the func it returns
// notes the call's end.
func (c *Client) beginMove() (end func()) {
	c.mu.Lock()
	c.moving++
	c.moves++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.moving--
		c.mu.Unlock()
	}
}

// settleMove records the tab a createTab or selectTab answer names as
// attached before the call counts as ended, so that no one sees the old
// tab as the client's in between.
func (c *Client) settleMove(ext *extension, res json.RawMessage) {
	if tabIDOf(res) != "" {
		c.attach(ext, res)
	}
}

// steadyOn reports whether the client works in tabID with no call under
// way that may attach another tab, and the count of moves so far.
func (c *Client) steadyOn(tabID string) (moves uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok = c.ext != nil && c.ext.attached && c.lastTab == tabID && c.moving == 0
	return c.moves, ok
}

// movedSince reports whether a call that may attach another tab started,
// or the attached tab changed, after steadyOn returned moves.
func (c *Client) movedSince(moves uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moves != moves
}

// maxWorked bounds the tabs a client remembers having worked in.
const maxWorked = 256

// noteWorked remembers that the client worked in tab id. c.mu is held.
func (c *Client) noteWorked(id string) {
	for i, w := range c.worked {
		if w == id {
			c.worked = append(c.worked[:i], c.worked[i+1:]...)
			break
		}
	}
	c.worked = append(c.worked, id)
	if len(c.worked) > maxWorked {
		c.worked = c.worked[len(c.worked)-maxWorked:]
	}
}

// forgetWorked drops tab id from the tabs the client worked in: one it
// attached only to close it.
func (c *Client) forgetWorked(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, w := range c.worked {
		if w == id {
			c.worked = append(c.worked[:i], c.worked[i+1:]...)
			return
		}
	}
}

// WorkedTabs returns the ids of the tabs this client has attached since
// it started (the most recent last, at most 256), whether or not they are
// still open: the tabs it drove, for the page tools.
func (c *Client) WorkedTabs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.worked...)
}

// Release lets go of the attached tab, for a second connection that must
// not keep one: extensions refuse to attach a tab another connection
// holds, so a tab the page tools looked into would be closed to the
// model's browser_tabs select. It says disconnect to the relay (which
// tells the extension to drop this connection and its tab); the next
// call connects again. Without an attached tab it does nothing.
func (c *Client) Release(ctx context.Context) error {
	c.mu.Lock()
	ext, s := c.ext, c.sock
	if ext == nil || !ext.attached || s == nil || ext.sock != s {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	_, err := c.control(ctx, s, "disconnect", struct{}{})
	// AttachedTab says "" only once the extension has let go, so that a
	// caller who sees it can have another connection take the tab.
	c.mu.Lock()
	if c.ext == ext {
		c.ext = nil
	}
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("release the tab: %w", err)
	}
	return nil
}
