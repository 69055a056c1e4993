package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/config"
)

// This file serves each client of mcpx in its own era. Under protocol
// auto a server that speaks both eras is connected in the legacy one
// (see handshake), which its legacy clients need; a request from a
// client that speaks the modern era itself (CallOptions.PassInput) then
// goes over a second connection to the same server, made in the modern
// era when such a request first comes and closed when none has come for
// Options.OtherEraIdle. Over HTTP that connection is a few stateless
// requests; over stdio it is a second process of the server's command,
// paid for only while clients of both eras use it. The catalog is the
// first connection's; a change the second one reports (a modern client's
// call changed the server's tools) becomes the catalog, since over stdio
// the second process's state is its own and its clients must see what
// they caused.
//
// A tool written for the legacy era asks its client in the middle of
// the call (elicitation/create, sampling), which a server's SDK refuses
// in a modern request. Such a call is made again over the first
// connection, where mcpx bridges the question to the modern client as
// input_required, and the tool is remembered to go there from then on.
// What the tool did before it asked is done twice; it asks first in
// every tool we know.

// defaultOtherEraIdle is how long a second connection outlives its last
// request.
const defaultOtherEraIdle = 5 * time.Minute

// otherEra is a Client's second connection, in the modern era.
type otherEra struct {
	c     *Client // the connection's own Client, protocol modern
	busy  int     // requests on it now
	timer *time.Timer
	// seen is the second connection's catalog as it last reported it;
	// its first report only sets it.
	seen    Catalog
	hasSeen bool
}

// forModern returns the Client that a request with o goes to: the modern
// one for a modern caller of a server known to speak both eras that is
// connected in the legacy era, under protocol auto; nil for c itself.
// The caller calls done once the request is over.
func (c *Client) forModern(o CallOptions, method string, params json.RawMessage) (other *Client, done func()) {
	if !o.PassInput || !c.bothEras.Load() || !c.servesBothEras() {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil || c.conn.modern() || c.closing || c.asksLegacyLocked(method, params) {
		return nil, nil
	}
	oe := c.other
	if oe == nil {
		oe = &otherEra{}
		oe.c = c.newOtherEra(oe)
		c.other = oe
		oe.c.Start(context.Background())
		c.log.Info("a client of the modern era: connecting to the server in that era too")
	}
	oe.busy++
	if oe.timer != nil {
		oe.timer.Stop()
	}
	var once sync.Once
	return oe.c, func() { once.Do(func() { c.otherDone(oe) }) }
}

// servesBothEras reports whether the server's config lets mcpx choose
// its era per client: protocol auto, over a transport of both eras.
func (c *Client) servesBothEras() bool {
	p := c.cfg.Protocol
	return (p == "" || p == config.ProtocolAuto) && c.cfg.Transport != config.TransportSSE
}

// newOtherEra is the Client of c's second connection, oe: c's server, in
// the modern era, with c's callbacks for what reaches clients, and the
// changes of its catalog going to c's.
func (c *Client) newOtherEra(oe *otherEra) *Client {
	cfg := c.cfg
	cfg.Protocol = config.ProtocolModern
	opts := c.opts
	opts.OnChange = func(other *Client) { c.otherChanged(oe, other) }
	opts.CacheDir = ""
	opts.Offline = false
	opts.Reconnect = true
	return New(cfg, &opts)
}

// otherDone ends one request on oe, and, once none is left, closes oe
// after the idle time unless another comes first.
func (c *Client) otherDone(oe *otherEra) {
	c.mu.Lock()
	defer c.mu.Unlock()
	oe.busy--
	if oe.busy > 0 || c.other != oe {
		return
	}
	idle := c.opts.OtherEraIdle
	if idle <= 0 {
		idle = defaultOtherEraIdle
	}
	if oe.timer == nil {
		oe.timer = time.AfterFunc(idle, func() { c.closeOtherIfIdle(oe) })
	} else {
		oe.timer.Reset(idle)
	}
}

// closeOtherIfIdle closes oe when no request came since its timer was
// set.
func (c *Client) closeOtherIfIdle(oe *otherEra) {
	c.mu.Lock()
	if c.other != oe || oe.busy > 0 {
		c.mu.Unlock()
		return
	}
	c.other = nil
	c.mu.Unlock()
	c.log.Info("no client of the modern era for a while: closing the server's connection in that era")
	oe.c.Close()
}

// otherFailed drops a second connection that could not be made: the
// server no longer speaks the modern era, so it is not taken for one that
// speaks both until it says so again.
func (c *Client) otherFailed(other *Client, err error) {
	if other.Status().State != StateFailed {
		return
	}
	c.mu.Lock()
	oe := c.other
	if oe == nil || oe.c != other {
		c.mu.Unlock()
		return
	}
	c.other = nil
	c.bothEras.Store(false)
	c.mu.Unlock()
	c.log.Warn("could not connect in the modern era too: serving every client in the legacy era", "err", c.opts.Redact(err.Error()))
	other.Close()
}

// closeOther closes the second connection, if any, as c closes.
func (c *Client) closeOther() {
	c.mu.Lock()
	oe := c.other
	c.other, c.closing = nil, true
	c.mu.Unlock()
	if oe != nil {
		if oe.timer != nil {
			oe.timer.Stop()
		}
		oe.c.Close()
	}
}

// killOther kills the second connection's process, if any.
func (c *Client) killOther() {
	c.mu.Lock()
	oe := c.other
	c.mu.Unlock()
	if oe != nil {
		oe.c.Kill()
	}
}

// OtherEra reports whether c keeps a second connection, in the modern
// era, for its modern clients now.
func (c *Client) OtherEra() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.other != nil
}

// otherChanged takes a change of the second connection's catalog as the
// server's: over stdio it is another process, and the modern client
// whose call changed its tools must see them. Its first catalog, which
// is the first connection's as a rule, changes nothing.
func (c *Client) otherChanged(oe *otherEra, other *Client) {
	if other.Status().State != StateConnected {
		return
	}
	cat := other.Catalog()
	c.mu.Lock()
	if c.other != oe || c.conn == nil {
		c.mu.Unlock()
		return
	}
	first := !oe.hasSeen
	if !first && sameCatalog(oe.seen, cat) {
		c.mu.Unlock()
		return
	}
	oe.seen, oe.hasSeen = cat, true
	if first || sameCatalog(c.catalog, cat) {
		c.mu.Unlock()
		return
	}
	c.catalog = cat
	c.countLocked()
	cn := c.conn
	c.mu.Unlock()
	c.log.Debug("catalog changed over the modern era's connection", "tools", len(cat.Tools), "resources", len(cat.Resources), "prompts", len(cat.Prompts))
	c.opts.OnChange(c)
	c.store(cn)
}

// sameCatalog reports whether a and b list the same items, byte for byte.
func sameCatalog(a, b Catalog) bool {
	same := func(x, y []json.RawMessage) bool {
		return slices.EqualFunc(x, y, func(p, q json.RawMessage) bool { return bytes.Equal(p, q) })
	}
	return same(a.Tools, b.Tools) && same(a.Resources, b.Resources) &&
		same(a.ResourceTemplates, b.ResourceTemplates) && same(a.Prompts, b.Prompts)
}

// refusedMarker is what the Go SDK's server says when a tool asks its
// client in the middle of a modern request (SEP-2322): the tool was
// written for the legacy era.
const refusedMarker = "cannot be sent while serving a request on protocol version"

// refusedQuestion reports whether a tools/call over the second
// connection failed because its tool asked the legacy way, as its error
// or as the isError result the tool made of it.
func refusedQuestion(method string, res json.RawMessage, err error) bool {
	if method != "tools/call" {
		return false
	}
	if err != nil {
		var rpc *RPCError
		return errors.As(err, &rpc) && strings.Contains(rpc.Message, refusedMarker)
	}
	if !bytes.Contains(res, []byte(refusedMarker)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(res, &r) != nil || !r.IsError {
		return false
	}
	for _, c := range r.Content {
		if strings.Contains(c.Text, refusedMarker) {
			return true
		}
	}
	return false
}

// toolOf is the name of the tool a tools/call's params call, or "".
func toolOf(method string, params json.RawMessage) string {
	if method != "tools/call" {
		return ""
	}
	return target(params)
}

// asksLegacyLocked reports whether params call a tool found to ask the
// legacy way; c.mu is held.
func (c *Client) asksLegacyLocked(method string, params json.RawMessage) bool {
	if len(c.legacyAsks) == 0 {
		return false
	}
	return c.legacyAsks[toolOf(method, params)]
}

// askedLegacy notes that the tool params call asks the legacy way, so
// that its calls go over the first connection from now on.
func (c *Client) askedLegacy(method string, params json.RawMessage) {
	name := toolOf(method, params)
	if name == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.legacyAsks == nil {
		c.legacyAsks = map[string]bool{}
	}
	if !c.legacyAsks[name] {
		c.legacyAsks[name] = true
		c.log.Info("a tool asks its client the legacy way: calling it in that era for modern clients too", "tool", name)
	}
}

// sendOther is [Client.Send] over the second connection. A call whose
// tool turns out to ask the legacy way is made again over c, on a
// goroutine of its own since that one waits, and what the caller's
// cancel says reaches it too.
func (c *Client) sendOther(ctx context.Context, other *Client, end func(), method string, params json.RawMessage,
	opts *CallOptions, done func(json.RawMessage, error)) (cancel func(cause error), ok bool) {
	o := optionsOf(opts)
	// The retry's context is made only for a retry, not on every call;
	// a cancel that comes first is kept for it.
	var (
		mu        sync.Mutex
		cancelled bool
		cause     error
		stopRetry context.CancelCauseFunc
	)
	cancelOther, ok := other.Send(ctx, method, params, opts, func(res json.RawMessage, err error) {
		end()
		if !refusedQuestion(method, res, err) {
			done(res, err)
			return
		}
		c.askedLegacy(method, params)
		mu.Lock()
		again, stop := context.WithCancelCause(ctx)
		if stopRetry = stop; cancelled {
			stop(cause)
		}
		mu.Unlock()
		retry := o
		retry.Batch, retry.Flusher = nil, nil
		go func() {
			defer stop(nil)
			res, err := c.RequestWith(again, method, params, &retry)
			done(res, err)
			if o.Flusher != nil {
				o.Flusher.Flush()
			}
		}()
	})
	if !ok {
		// Not connected yet, or remote: the caller's Request waits for
		// it, through forModern again.
		end()
		return cancelOther, false
	}
	return func(why error) {
		mu.Lock()
		cancelled, cause = true, why
		stop := stopRetry
		mu.Unlock()
		if stop != nil {
			stop(why)
		}
		cancelOther(why)
	}, true
}
