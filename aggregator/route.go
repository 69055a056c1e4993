package aggregator

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpx/mcpx/telemetry"
)

// This file decides which served client answers an upstream's request to
// the client (sampling, elicitation, roots). Over a shared upstream such a
// request carries nothing that names the call that caused it, so mcpx
// goes by what is in flight: the one client with a call in flight on
// that upstream gets it; with none or several, the client that most
// recently started a call on it (a guess the README documents); failing
// that, any connected client.

// listenerKey carries the served client a request came from.
type listenerKey struct{}

func withListener(ctx context.Context, l *listener) context.Context {
	return context.WithValue(ctx, listenerKey{}, l)
}

// callers counts, per upstream, the calls each served client has in flight.
type callers struct {
	mu       sync.Mutex
	inflight map[string]map[*listener]int
	last     map[string]*listener
}

// begin records a call of l on server and returns the function that ends it.
func (c *callers) begin(server string, l *listener) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight == nil {
		c.inflight, c.last = map[string]map[*listener]int{}, map[string]*listener{}
	}
	if c.inflight[server] == nil {
		c.inflight[server] = map[*listener]int{}
	}
	c.inflight[server][l]++
	c.last[server] = l
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.inflight[server][l]--; c.inflight[server][l] <= 0 {
			delete(c.inflight[server], l)
		}
	}
}

// of returns the client a request from server goes to, or nil when no
// served client is a candidate; alive reports whether l is still served.
func (c *callers) of(server string, alive func(*listener) bool) *listener {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inflight[server]; len(in) == 1 {
		for l := range in {
			if alive(l) {
				return l
			}
		}
	}
	if l := c.last[server]; l != nil && alive(l) {
		return l
	}
	return nil
}

// forget drops a client that is no longer served.
func (c *callers) forget(l *listener) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for server, last := range c.last {
		if last == l {
			delete(c.last, server)
		}
	}
}

// request sends one request to a source on behalf of the served client in
// ctx, if any, so that what the source asks of the client meanwhile goes
// to that client.
func (a *Aggregator) request(ctx context.Context, src Source, method string, params json.RawMessage) (json.RawMessage, error) {
	if l, ok := ctx.Value(listenerKey{}).(*listener); ok {
		defer a.callers.begin(src.Name(), l)()
	}
	sent := params
	var call telemetry.Call
	if a.tel != nil {
		ctx, sent, call = a.startCall(ctx, src, method, params)
	}
	var start time.Time
	if audited(method) && a.opts.Audit != nil {
		start = time.Now()
	}
	res, err := src.Request(ctx, method, sent)
	if !start.IsZero() {
		a.audit(ctx, start, src.Name(), method, params, res, err)
	}
	if a.tel != nil {
		endCall(call, res, err)
	}
	return res, err
}

// clientFor returns the served client that answers a request from server.
func (a *Aggregator) clientFor(server string) *listener {
	alive := func(l *listener) bool { _, ok := a.listeners.Load(l); return ok }
	if l := a.callers.of(server, alive); l != nil {
		return l
	}
	return a.client()
}
