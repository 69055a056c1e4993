package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
)

// This file opens tabs: createTab, and what to do when the extension
// refuses. The v1.5 extension opens the tab first, points the
// connection at it, and only then checks the URL: about:, chrome:,
// edge:, devtools: and chrome-extension: pages it will not automate
// ("Cannot automate tab with URL: about:blank"). The tab stays open, with
// no debugger on it, and the tab the connection had is no longer the one
// its commands go to.

// ErrNoTab is wrapped by the errors of calls that need a tab when the
// client has none to work in: none attached and the one it last worked
// in gone. Nothing opens a tab of its own accord but browser_navigate
// (at its URL) and browser_tabs new.
var ErrNoTab = errors.New("no tab to work in")

var errNoTab = fmt.Errorf("%w: open a page with browser_navigate, or take one of the browser's tabs with browser_tabs (list, then select)", ErrNoTab)

// createTab sends createTab with params (url is the URL they ask for) and
// records the tab it answers as attached. When the extension answers an
// error it may have opened the tab anyway and pointed the connection at
// it: the client then counts no tab as attached (the next call takes back
// the one it worked in) and closes the tab left behind.
func (c *Client) createTab(ctx context.Context, url string, params map[string]any) (json.RawMessage, error) {
	if browserPage(url) {
		// Every extension would open it and none could drive it (nor,
		// v1.5, close it again).
		return nil, fmt.Errorf("createTab %s: the browser extension cannot drive the browser's own pages (chrome:, edge:, devtools:, extensions): give a web page's URL", url)
	}
	before, listErr := getTabs(ctx, c)
	c.mu.Lock()
	prev := c.lastTab
	c.mu.Unlock()
	ext, res, err := c.call(ctx, "createTab", params)
	if err == nil {
		if tabIDOf(res) == "" {
			return nil, fmt.Errorf("createTab: the browser answered without a tab: %s", truncate(string(res), 200))
		}
		c.attach(ext, res)
		return res, nil
	}
	err = fmt.Errorf("createTab %s: %w", url, err)
	if refusesPage(err) {
		err = fmt.Errorf("%w (the browser extension does not drive about:, chrome: or extension pages: give a web page's URL)", err)
	}
	var re *RemoteError
	if ext == nil || !errors.As(err, &re) {
		return nil, err // no answer: nothing is known to have opened
	}
	c.unattach(ext)
	if listErr != nil {
		return nil, fmt.Errorf("%w; a tab it opened may be left: %v", err, listErr)
	}
	if cerr := c.closeLeftover(ctx, ext, before, url, prev); cerr != nil {
		return nil, fmt.Errorf("%w; %v", err, cerr)
	}
	return nil, err
}

// browserPage reports whether url is one of the browser's own pages,
// which chrome.debugger never attaches to.
func browserPage(url string) bool {
	u := strings.ToLower(strings.TrimSpace(url))
	for _, scheme := range []string{"chrome:", "edge:", "devtools:", "chrome-extension:"} {
		if strings.HasPrefix(u, scheme) {
			return true
		}
	}
	return false
}

// refusesPage recognises an extension's refusal to automate a page.
func refusesPage(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "cannot automate")
}

// unattach records that ext has no tab attached for this client's
// commands any more, keeping the tab it worked in to take back.
func (c *Client) unattach(ext *extension) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ext.attached {
		ext.attached = false
		c.moves++
	}
}

// closeLeftover closes the tab a failed createTab opened: a tab new since
// before that is blank or at url (or its site: a redirect). A tab the user
// opened meanwhile elsewhere is left alone. closeTab first (v1.9); when
// the tab is still there (v1.5 answers closeTab with a silent success),
// selectTab and Page.close. The client ends with no tab attached and prev
// as the tab it worked in.
func (c *Client) closeLeftover(ctx context.Context, ext *extension, before []Tab, url, prev string) error {
	after, err := getTabs(ctx, c)
	if err != nil {
		return fmt.Errorf("a tab it opened may be left: %v", err)
	}
	known := map[string]bool{}
	for _, t := range before {
		known[string(t.ID)] = true
	}
	var left []Tab
	for _, t := range after {
		if !known[string(t.ID)] && openedAt(t.URL, url) {
			left = append(left, t)
		}
	}
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		ext.attached = false
		c.lastTab = prev
		c.moves++
	}()
	for _, t := range left {
		if err := c.closeTabByID(ctx, string(t.ID)); err != nil {
			return fmt.Errorf("the tab it opened at %s is still open: %v", orText(t.URL, url), err)
		}
		c.forgetWorked(string(t.ID))
		c.opts.Logger.Info("browser: closed the tab a refused createTab left", "url", t.URL)
	}
	return nil
}

// openedAt reports whether a tab at have may be the one createTab opened
// for want: blank (not loaded yet, or refused), at want, or on its site.
func openedAt(have, want string) bool {
	if have == "" || have == "about:blank" || strings.TrimSuffix(have, "/") == strings.TrimSuffix(want, "/") {
		return true
	}
	h, err1 := neturl.Parse(have)
	w, err2 := neturl.Parse(want)
	return err1 == nil && err2 == nil && w.Host != "" && strings.EqualFold(h.Host, w.Host)
}

// closeTabByID closes the tab whose id is id and checks that it went.
func (c *Client) closeTabByID(ctx context.Context, id string) error {
	index := func() (int, bool, error) {
		tabs, err := getTabs(ctx, c)
		if err != nil {
			return 0, false, err
		}
		for i, t := range tabs {
			if string(t.ID) == id {
				if t.Index != nil {
					i = *t.Index
				}
				return i, true, nil
			}
		}
		return 0, false, nil
	}
	i, open, err := index()
	if err != nil || !open {
		return err
	}
	if _, _, err := c.call(ctx, "closeTab", map[string]any{"index": i}); err != nil && !isUnknownCommand(err) {
		c.opts.Logger.Debug("browser: closeTab failed; trying Page.close", "err", err)
	}
	if i, open, err = index(); err != nil || !open {
		return err
	}
	ext, res, err := c.call(ctx, "selectTab", map[string]any{"tabIndex": i, "activate": false, "stealth": true})
	if err != nil {
		return fmt.Errorf("selectTab %d: %w", i, err)
	}
	if got := tabIDOf(res); got != id {
		return fmt.Errorf("selectTab %d answered tab %s, not %s", i, got, id)
	}
	if _, _, err := c.call(ctx, "forwardCDPCommand", map[string]any{"method": "Page.close", "params": struct{}{}}); err != nil {
		return fmt.Errorf("Page.close: %w", err)
	}
	c.unattach(ext)
	if _, open, err = index(); err == nil && open {
		err = errors.New("it is still listed after closeTab and Page.close")
	}
	return err
}
