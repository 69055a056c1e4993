package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"time"
)

// lifecycle is what lazy start and idle stop know about a Client's use.
// Its fields are guarded by Client.mu.
type lifecycle struct {
	inflight   int             // requests sent and not yet answered
	waiting    int             // requests waiting for a connection
	subs       map[string]bool // resource URIs subscribed to on this connection
	lastActive time.Time       // when inflight last dropped to zero
	changes    chan struct{}   // closed and replaced at every state change
	wake       chan struct{}   // a sleeping server is asked to start
	activity   chan struct{}   // inflight, waiting or subs changed
}

func newLifecycle() lifecycle {
	return lifecycle{subs: map[string]bool{}, changes: make(chan struct{}),
		wake: make(chan struct{}, 1), activity: make(chan struct{}, 1), lastActive: time.Now()}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// broadcast wakes every call waiting for the state to change.
func (c *Client) broadcast() {
	c.mu.Lock()
	close(c.life.changes)
	c.life.changes = make(chan struct{})
	c.mu.Unlock()
}

// acquire returns the live connection for one request, counted in flight
// until [Client.release]. A server still starting is waited for, and a
// sleeping one woken, up to the server's timeout; a failed one fails at
// once with its last error.
func (c *Client) acquire(ctx context.Context) (*conn, error) {
	timeout := c.timeout()
	var deadline <-chan time.Time
	c.mu.Lock()
	defer c.mu.Unlock()
	waiting := false
	defer func() {
		if waiting {
			c.life.waiting--
			poke(c.life.activity)
		}
	}()
	for {
		if c.conn != nil {
			c.begin()
			return c.conn, nil
		}
		switch c.status.State {
		case StateConnecting, StateSleeping:
		default: // failed, stopped, disabled
			if msg := c.status.Err; msg != "" {
				return nil, fmt.Errorf("%s: %w (%s)", c.cfg.Name, ErrNotConnected, msg)
			}
			return nil, fmt.Errorf("%s: %w", c.cfg.Name, ErrNotConnected)
		}
		if c.opts.Offline {
			return nil, fmt.Errorf("%s: %w (offline: only its remembered catalog is read)", c.cfg.Name, ErrNotConnected)
		}
		if !waiting {
			waiting = true
			c.life.waiting++
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		if c.status.State == StateSleeping {
			poke(c.life.wake)
		}
		ch := c.life.changes
		c.mu.Unlock()
		select {
		case <-ch:
			c.mu.Lock()
		case <-ctx.Done():
			c.mu.Lock()
			return nil, ctx.Err()
		case <-deadline:
			c.mu.Lock()
			return nil, fmt.Errorf("%s: %w (still starting after %s)", c.cfg.Name, ErrNotConnected, timeout)
		}
	}
}

// release ends what acquire counted.
func (c *Client) release() {
	c.mu.Lock()
	c.life.inflight--
	idle := c.life.inflight == 0
	if idle {
		c.life.lastActive = time.Now()
	}
	c.mu.Unlock()
	if idle {
		poke(c.life.activity)
	}
}

// begin counts one more request in flight; c.mu must be held. Only the
// first wakes the idle watch (awake): a poke per call would cost every
// call a scheduler hand-off for nothing.
func (c *Client) begin() {
	c.life.inflight++
	if c.life.inflight == 1 {
		poke(c.life.activity)
	}
}

// track keeps what a connection was asked that lasts: the resource
// subscriptions, which keep the server awake and which every later
// connection is asked for again (see resubscribe), and the log level,
// which every connection is set to as it starts.
func (c *Client) track(method string, params json.RawMessage) {
	switch method {
	case "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
	default:
		return
	}
	var p struct {
		URI   string `json:"uri"`
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	switch method {
	case "logging/setLevel":
		c.logLevel = p.Level
	case "resources/subscribe":
		c.life.subs[p.URI] = true
		if c.subscribed == nil {
			c.subscribed = map[string]json.RawMessage{}
		}
		c.subscribed[p.URI] = bytes.Clone(params)
	default:
		delete(c.life.subs, p.URI)
		delete(c.subscribed, p.URI)
	}
	c.mu.Unlock()
	poke(c.life.activity)
}

// Carry makes c, not yet started, begin where from is: its connections
// get from's log level and are asked for from's resource subscriptions.
// A Client that replaces another (its config changed) carries on with
// the sessions that subscribed through the one before.
func (c *Client) Carry(from *Client) {
	from.mu.Lock()
	level, subs := from.logLevel, maps.Clone(from.subscribed)
	from.mu.Unlock()
	c.mu.Lock()
	c.logLevel, c.subscribed = level, subs
	c.mu.Unlock()
}

// resubscribe asks the new connection cn for the resource subscriptions
// the connections before it were asked for: a server that restarted, or
// slept, knows nothing of them, while the sessions served still expect
// their resources' updates. What fails is logged: the connection is still
// good for everything else.
func (c *Client) resubscribe(ctx context.Context, cn *conn) {
	c.mu.Lock()
	subs := maps.Clone(c.subscribed)
	if cn.modern() {
		// Its listen stream asks for them (see listen.go).
		for uri := range subs {
			c.life.subs[uri] = true
		}
		subs = nil
	}
	c.mu.Unlock()
	if len(subs) == 0 {
		poke(c.life.activity)
		return
	}
	timeout := c.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for uri, params := range subs {
		if _, err := cn.request(ctx, "resources/subscribe", params); err != nil {
			c.log.Warn("could not subscribe again on the new connection", "uri", uri, "err", c.opts.Redact(err.Error()))
			continue
		}
		c.mu.Lock()
		_, still := c.subscribed[uri]
		if still {
			c.life.subs[uri] = true
		}
		c.mu.Unlock()
		if !still { // unsubscribed meanwhile
			_, _ = cn.request(ctx, "resources/unsubscribe", params)
		}
	}
	poke(c.life.activity)
}

// end is why a live connection stopped being served.
type end int

const (
	endLost    end = iota // the server went away
	endStopped            // mcpx is stopping the Client
	endIdle               // no use for IdleTimeout: put it to sleep
)

// awake serves a live connection until it is lost, the Client stops, or it
// has been idle for the server's idleTimeout. A lazy server that was only
// started to learn its catalog sleeps as soon as nothing uses it, unless
// an idleTimeout says how long to wait.
func (c *Client) awake(ctx context.Context, cn *conn, learning bool) end {
	idle := c.cfg.IdleTimeout
	watch := idle > 0 || learning
	c.mu.Lock()
	c.life.lastActive = time.Now() // idle from the connect on, not from before it
	c.mu.Unlock()
	for {
		var t *time.Timer
		var timer <-chan time.Time
		if watch {
			c.mu.Lock()
			busy := c.life.inflight > 0 || c.life.waiting > 0 || len(c.life.subs) > 0
			left := idle - time.Since(c.life.lastActive)
			c.mu.Unlock()
			if !busy {
				if left <= 0 {
					return endIdle
				}
				t = time.NewTimer(left)
				timer = t.C
			}
		}
		activity := c.life.activity
		if !watch {
			activity = nil // nothing to watch: calls need not wake this loop
		}
		var why end = -1
		select {
		case <-ctx.Done():
			why = endStopped
		case <-cn.lost:
			why = endLost
		case <-activity:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		if why >= 0 {
			return why
		}
	}
}

// sleep parks a server that is not needed until a call wakes it. It
// returns false when the Client is stopped meanwhile.
func (c *Client) sleep(ctx context.Context) bool {
	c.mu.Lock()
	select { // a wake from before is stale unless someone still waits
	case <-c.life.wake:
	default:
	}
	if c.life.waiting > 0 {
		c.mu.Unlock()
		c.log.Info("starting on demand")
		return true
	}
	c.status.State = StateSleeping
	c.mu.Unlock()
	c.markReady()
	c.changed()
	select {
	case <-ctx.Done():
		c.update(func(s *Status) { s.State = StateStopped })
		return false
	case <-c.life.wake:
		c.log.Info("starting on demand")
		return true
	}
}

// hasRemembered reports whether a remembered catalog is shown.
func (c *Client) hasRemembered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remembered
}

// remember shows the server's remembered catalog, if any, until it
// connects. A file that cannot be used is only worth a debug line.
func (c *Client) remember() {
	r, err := LoadRemembered(c.opts.CacheDir, c.cfg)
	if err != nil {
		c.log.Debug("remembered catalog ignored", "err", c.opts.Redact(err.Error()))
	}
	if r == nil {
		return
	}
	c.mu.Lock()
	c.remembered = true
	c.saved = r.mark
	c.catalog = r.Catalog()
	c.instructions = r.Instructions
	c.status.ServerInfo = r.ServerInfo
	c.status.ProtocolVersion = r.ProtocolVersion
	c.era = r.Era()
	if r.BothEras {
		c.bothEras.Store(true)
	}
	c.countLocked()
	c.mu.Unlock()
	c.markKnown()
	c.opts.OnChange(c)
}

// offline shows the remembered catalog and never connects.
func (c *Client) offline() {
	if c.hasRemembered() {
		c.update(func(s *Status) { s.State = StateSleeping })
	} else {
		c.update(func(s *Status) { s.State = StateFailed; s.Err = "nothing remembered yet" })
	}
	c.markReady()
}

// failed publishes a failed connect attempt: a remembered catalog is not
// shown for a server that cannot start.
func (c *Client) failed(err error) {
	c.mu.Lock()
	if c.conn == nil {
		c.catalog = Catalog{}
		c.instructions = ""
		c.countLocked()
	}
	c.status.State = StateFailed
	c.status.Err = c.opts.Redact(err.Error())
	c.mu.Unlock()
	c.changed()
}

// store remembers the connection's catalog for the next start. A
// catalog the file already holds is not written again: most starts
// find what the last one saved, and writing it anew would cost a new
// file (and its inode) per server at every start.
func (c *Client) store(cn *conn) {
	if c.opts.CacheDir == "" {
		return
	}
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	c.mu.Lock()
	if c.conn != cn {
		c.mu.Unlock()
		return
	}
	cat := c.catalog
	saved := c.saved
	both := c.bothEras.Load()
	c.remembered = true
	c.mu.Unlock()
	caps, _ := json.Marshal(cn.caps)
	r := &Remembered{Saved: saved.saved, ServerInfo: cn.serverInfo, ProtocolVersion: cn.protocol,
		Capabilities: caps, Tools: cat.Tools, Resources: cat.Resources, Templates: cat.ResourceTemplates, Prompts: cat.Prompts,
		Instructions: cn.instructions, BothEras: both}
	if !saved.saved.IsZero() {
		if data, err := r.encode(c.cfg); err == nil && sha256.Sum256(data) == saved.sum {
			return
		}
	}
	r.Saved = time.Now().UTC()
	if err := saveRemembered(c.opts.CacheDir, c.cfg, r); err != nil {
		c.log.Debug("could not remember the catalog", "err", c.opts.Redact(err.Error()))
		return
	}
	c.mu.Lock()
	c.saved = r.mark
	c.mu.Unlock()
}
