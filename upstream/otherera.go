package upstream

import (
	"context"
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
// paid for only while clients of both eras use it. The catalog stays the
// first connection's: the second one lists, remembers and reports
// nothing of its own.

// defaultOtherEraIdle is how long a second connection outlives its last
// request.
const defaultOtherEraIdle = 5 * time.Minute

// otherEra is a Client's second connection, in the modern era.
type otherEra struct {
	c     *Client // the connection's own Client, protocol modern
	busy  int     // requests on it now
	timer *time.Timer
}

// forModern returns the Client that a request with o goes to: the modern
// one for a modern caller of a server known to speak both eras that is
// connected in the legacy era, under protocol auto; nil for c itself.
// The caller calls done once the request is over.
func (c *Client) forModern(o CallOptions) (other *Client, done func()) {
	if !o.PassInput || !c.servesBothEras() {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.bothEras || c.conn == nil || c.conn.modern() || c.closing {
		return nil, nil
	}
	oe := c.other
	if oe == nil {
		oe = &otherEra{c: c.newOtherEra()}
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

// newOtherEra is the Client of c's second connection: c's server, in
// the modern era, with c's callbacks for what reaches clients and none
// for its catalog.
func (c *Client) newOtherEra() *Client {
	cfg := c.cfg
	cfg.Protocol = config.ProtocolModern
	opts := c.opts
	opts.OnChange = nil
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
	c.other, c.bothEras = nil, false
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
