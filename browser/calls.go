package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Extension is a browser the relay offers.
type Extension struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Connected bool   `json:"connected"`
}

// socketReady waits, at most ReadyTimeout, for a live relay socket.
func (c *Client) socketReady(ctx context.Context) (*socket, error) {
	if c.badCfg != nil {
		return nil, c.badCfg
	}
	if c.claims.expired(c.opts.Now()) {
		return nil, fmt.Errorf("%w at %s: get a new token", ErrTokenExpired, c.claims.expiry())
	}
	deadline := time.NewTimer(c.opts.ReadyTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		s, wait, last := c.sock, c.sockWait, c.lastErr
		c.mu.Unlock()
		if s != nil && !s.closed() { // a closed one: the dial loop is about to replace it
			return s, nil
		}
		select {
		case <-wait:
		case <-c.done:
			return nil, fmt.Errorf("browser relay %s: not connected: %v", redactURL(c.url), orNone(last))
		case <-deadline.C:
			return nil, fmt.Errorf("browser relay %s is not reachable: %v", redactURL(c.url), orNone(last))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func orNone(err error) error {
	if err == nil {
		return errors.New("still connecting")
	}
	return err
}

// control calls one of the relay's own methods.
func (c *Client) control(ctx context.Context, s *socket, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.ControlTimeout)
	defer cancel()
	res, err := s.call(ctx, method, params, false)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("the browser relay did not answer %s within %s", method, c.opts.ControlTimeout)
	}
	return res, err
}

// ListExtensions asks the relay which browsers are connected for this
// user. An empty list within [Options].ExtensionWait of the relay
// connection coming up is asked again until a browser connects or that
// time has passed: right after a start the extension has not found the
// relay yet.
func (c *Client) ListExtensions(ctx context.Context) ([]Extension, error) {
	s, err := c.socketReady(ctx)
	if err != nil {
		return nil, err
	}
	return c.awaitExtensions(ctx, s, "", 0)
}

// listPoll is how often an empty list of browsers is asked again.
const listPoll = 200 * time.Millisecond

// awaitExtensions lists the browsers on s until want (an id or name; ""
// means any) is among them, or ExtensionWait has passed since s came up
// and at least atLeast since this call began; then it returns the last
// list.
func (c *Client) awaitExtensions(ctx context.Context, s *socket, want string, atLeast time.Duration) ([]Extension, error) {
	deadline := s.up.Add(c.opts.ExtensionWait)
	if d := time.Now().Add(atLeast); d.After(deadline) {
		deadline = d
	}
	for {
		exts, err := c.listExtensions(ctx, s)
		if err != nil || hasExtension(exts, want) {
			return exts, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return exts, nil
		}
		t := time.NewTimer(min(left, listPoll))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-s.done:
			t.Stop()
			return nil, s.closedErr()
		case <-t.C:
		}
	}
}

func hasExtension(exts []Extension, want string) bool {
	if want == "" {
		return len(exts) > 0
	}
	for _, e := range exts {
		if e.ID == want || e.Name == want {
			return true
		}
	}
	return false
}

func (c *Client) listExtensions(ctx context.Context, s *socket) ([]Extension, error) {
	res, err := c.control(ctx, s, "list_extensions", struct{}{})
	if err != nil {
		return nil, fmt.Errorf("list_extensions: %w", err)
	}
	var out struct {
		Extensions []Extension `json:"extensions"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, fmt.Errorf("list_extensions: unexpected answer: %s", truncate(string(res), 200))
	}
	return out.Extensions, nil
}

// Connect switches to the browser with this extension id or name.
func (c *Client) Connect(ctx context.Context, idOrName string) (Extension, error) {
	s, err := c.socketReady(ctx)
	if err != nil {
		return Extension{}, err
	}
	// Let a connect under way finish first, so that it cannot undo this one.
	c.mu.Lock()
	a := c.attempt
	c.mu.Unlock()
	if a != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
			return Extension{}, ctx.Err()
		}
	}
	c.mu.Lock()
	c.ext = nil
	c.mu.Unlock()
	ext, err := c.awaitAttempt(ctx, c.startAttempt(s, idOrName))
	if err != nil {
		return Extension{}, err
	}
	return Extension{ID: ext.id, Name: ext.name, Connected: true}, nil
}

// connectAttempt is one extension connect, shared by every call that
// needs it: it runs on the client's life, not on the first caller's
// context, so that each caller waits only as long as its own context
// allows and nothing queues behind a slow relay.
type connectAttempt struct {
	sock *socket
	want string // the extension id or name asked for; "" for the only one
	done chan struct{}
	ext  *extension
	err  error
}

// ensureExtension returns the connected extension, connecting first when
// there is none on this socket.
func (c *Client) ensureExtension(ctx context.Context, s *socket) (*extension, error) {
	c.mu.Lock()
	ext, a := c.ext, c.attempt
	c.mu.Unlock()
	if ext != nil && ext.sock == s {
		return ext, nil
	}
	if a == nil || a.sock != s {
		a = c.startAttempt(s, c.opts.Extension)
	}
	return c.awaitAttempt(ctx, a)
}

// startAttempt starts connecting to want on s, unless an attempt on s is
// under way already, and returns the attempt.
func (c *Client) startAttempt(s *socket, want string) *connectAttempt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.attempt; a != nil && a.sock == s && a.want == want {
		return a
	}
	a := &connectAttempt{sock: s, want: want, done: make(chan struct{})}
	c.attempt = a
	life := c.life
	go func() {
		ctx, cancel := context.WithTimeout(life, 3*c.opts.ControlTimeout)
		defer cancel()
		a.ext, a.err = c.connectTo(ctx, s, want)
		c.mu.Lock()
		if c.attempt == a {
			c.attempt = nil
		}
		c.mu.Unlock()
		close(a.done)
	}()
	return a
}

func (c *Client) awaitAttempt(ctx context.Context, a *connectAttempt) (*extension, error) {
	select {
	case <-a.done:
		return a.ext, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to the browser: %w", ctx.Err())
	}
}

// startingBrowser is how long a connect waits for a browser missing from
// the relay's list even long after the relay connection came up: the list
// may be empty for a moment after a browser starts.
const startingBrowser = 2 * time.Second

// connectTo picks an extension (the one wanted, else the only one) and
// connects to it, waiting for it to appear as ListExtensions does.
func (c *Client) connectTo(ctx context.Context, s *socket, want string) (*extension, error) {
	exts, err := c.awaitExtensions(ctx, s, want, startingBrowser)
	if err != nil {
		return nil, err
	}
	pick, err := chooseExtension(exts, want)
	if err != nil {
		return nil, err
	}
	params := map[string]string{"extension_id": pick.ID}
	if s.legacy {
		params["extensionId"] = pick.ID
	}
	res, err := c.control(ctx, s, "connect", params)
	if isCode(err, codeAlreadyConnected) {
		// The relay still holds an earlier connection of ours: drop it.
		if _, derr := c.control(ctx, s, "disconnect", struct{}{}); derr != nil {
			return nil, fmt.Errorf("disconnect before reconnecting: %w", derr)
		}
		res, err = c.control(ctx, s, "connect", params)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to browser %q: %w", pick.Name, err)
	}
	var r struct {
		ConnectionID  string `json:"connection_id"`
		ConnectionID2 string `json:"connectionId"` // the legacy protocol
		ExtensionName string `json:"extension_name"`
		Success       *bool  `json:"success"`
		Error         string `json:"error"`
	}
	_ = json.Unmarshal(res, &r)
	if r.Success != nil && !*r.Success {
		return nil, fmt.Errorf("connect to browser %q: %s", pick.Name, orText(r.Error, "refused"))
	}
	if r.ConnectionID == "" {
		r.ConnectionID = r.ConnectionID2
	}
	ext := &extension{sock: s, id: pick.ID, name: pick.Name, connID: r.ConnectionID}
	if r.ExtensionName != "" {
		ext.name = r.ExtensionName
	}
	s.mu.Lock()
	s.connID = r.ConnectionID
	s.mu.Unlock()
	c.mu.Lock()
	c.ext = ext
	c.mu.Unlock()
	c.opts.Logger.Info("browser connected", "browser", ext.name)
	return ext, nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// errNoBrowser is the answer when no browser came.
var errNoBrowser = errors.New("no browser is connected to the relay: none came within a few seconds. Open Chrome with the browser extension (signed in, for a remote relay; it finds a local one by itself), then try again")

func chooseExtension(exts []Extension, want string) (Extension, error) {
	if len(exts) == 0 {
		return Extension{}, errNoBrowser
	}
	if want != "" {
		for _, e := range exts {
			if e.ID == want || e.Name == want {
				return e, nil
			}
		}
		return Extension{}, fmt.Errorf("no connected browser is %q; connected: %s", want, describe(exts))
	}
	if len(exts) > 1 {
		return Extension{}, fmt.Errorf("%d browsers are connected: %s; pick one with browser_connect or browser.extension in the config", len(exts), describe(exts))
	}
	return exts[0], nil
}

func describe(exts []Extension) string {
	parts := make([]string, len(exts))
	for i, e := range exts {
		parts[i] = fmt.Sprintf("%s (%s)", e.Name, e.ID)
	}
	return strings.Join(parts, ", ")
}

// Call sends a method to the browser extension, connecting to the relay
// and the extension first if needed, and returns its raw result.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	_, res, err := c.call(ctx, method, params)
	return res, err
}

func (c *Client) call(ctx context.Context, method string, params any) (*extension, json.RawMessage, error) {
	s, err := c.socketReady(ctx)
	if err != nil {
		return nil, nil, err
	}
	ext, err := c.ensureExtension(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	move := movesTab(method)
	if move {
		defer c.beginMove()()
	}
	cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	res, err := s.call(cctx, method, params, true)
	switch {
	case err == nil:
		if move {
			c.settleMove(ext, res)
		}
		return ext, res, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return ext, nil, fmt.Errorf("the browser did not answer %s within %s", method, c.opts.CallTimeout)
	case s.legacy && strings.Contains(strings.ToLower(err.Error()), "extension disconnected"):
		c.mu.Lock()
		if c.ext == ext {
			c.ext = nil
		}
		c.mu.Unlock()
		return ext, nil, fmt.Errorf("%w (%v): the call was not completed; the next call reconnects", ErrExtensionDisconnected, err)
	case isCode(err, codeRelayError) && strings.Contains(strings.ToLower(err.Error()), "not connected"):
		// The relay forgot us (it restarted, or dropped the extension):
		// connect again next time.
		c.mu.Lock()
		if c.ext == ext {
			c.ext = nil
		}
		c.mu.Unlock()
	}
	return ext, nil, err
}

// Status is the browser connection as `mcpx servers` shows it.
type Status struct {
	URL       string // without query or credentials
	Reachable bool   // the relay socket is up and the handshake passed
	Extension string // name of the connected browser; "" when none
	Clients   int    // MCP clients sharing the relay, when it says; else 0
	Err       string // why it is not working; never contains the token
	// Mode is how the relay is run ("remote", "local (hosting)", "local
	// (joined)"); the Client does not know, so whoever runs the relay
	// fills it in.
	Mode string
}

// Status reports the connection without touching the network.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{URL: redactURL(c.url), Reachable: c.sock != nil, Clients: c.status.clients}
	if c.ext != nil {
		st.Extension = c.ext.name
	}
	switch {
	case c.badCfg != nil:
		st.Err = c.badCfg.Error()
	case c.lastErr != nil && c.sock == nil:
		st.Err = c.lastErr.Error()
	}
	return st
}

// Probe waits for the relay and connects to the browser, then reports the
// Status; for one-shot commands such as `mcpx servers`.
func (c *Client) Probe(ctx context.Context) Status {
	s, err := c.socketReady(ctx)
	if err == nil {
		_, err = c.ensureExtension(ctx, s)
	}
	st := c.Status()
	if err != nil && st.Err == "" {
		st.Err = err.Error()
	}
	return st
}
