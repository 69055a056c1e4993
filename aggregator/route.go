package aggregator

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/upstream"
)

// This file decides which served client answers an upstream's request to
// the client (sampling, elicitation, roots). Over a shared upstream such a
// request carries nothing that names the call that caused it, so mcpx
// goes by what is in flight: the one client with a call in flight on
// that upstream caused it and gets it, whatever it declared (it answers
// as that client would). Where the cause cannot be known (none or several
// in flight), the question goes only to a client that declared it can
// answer it: the one among those that most recently started a call on
// that upstream (a guess the README documents), else any connected one;
// with none, the upstream gets the protocol's error at once rather than a
// refusal from a client that never could answer.

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
// served client is a candidate: the one client with a call in flight on
// server, else the most recent caller on server if it can answer (see
// the top of this file). alive reports whether l is still served; can
// whether it declared what the request asks.
func (c *callers) of(server string, alive, can func(*listener) bool) *listener {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inflight[server]; len(in) == 1 {
		for l := range in {
			if alive(l) {
				return l
			}
		}
	}
	if l := c.last[server]; l != nil && alive(l) && can(l) {
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

// request sends one request to a source on behalf of the served client
// l (nil: none), so that what the source asks of the client meanwhile
// goes to that client, and waits for its answer. sendTool is its twin
// that does not wait; both keep their books through begin.
func (a *Aggregator) request(ctx context.Context, l *listener, src Source, method string, params json.RawMessage) (json.RawMessage, error) {
	cctx, sent, o := a.begin(ctx, l, src, method, params)
	opts := l.options()
	res, err := requestWith(cctx, src, method, sent, &opts)
	o.finish(a, l, src, method, params, res, err)
	return res, err
}

// requestWith sends one request to src with opts, what it carries
// beside its params (where its progress goes, whether input_required
// passes), when src is an upstream. The other sources (the browser's,
// the page tools) have no use for them. The upstream is found by its
// type rather than an interface so that opts, passed through no dynamic
// call, stays on the caller's stack.
func requestWith(ctx context.Context, src Source, method string, params json.RawMessage, opts *upstream.CallOptions) (json.RawMessage, error) {
	if c, ok := src.(*upstream.Client); ok {
		return c.RequestWith(ctx, method, params, opts)
	}
	return src.Request(ctx, method, params)
}

// outgoing is the bookkeeping of one request to a source, the same for a
// waiting and a non-waiting one: the call counted as its client's (so
// that what the source asks meanwhile reaches that client), its audit
// line and its span. Small, so that the callback of a call sent without
// waiting holds it without an allocation of its own.
type outgoing struct {
	end   func()          // ends the count of the client's calls; nil: no client
	start time.Time       // zero: not audited
	run   string          // the code-mode run it is part of (runOf)
	who   string          // its principal (principal.Of)
	call  *telemetry.Call // nil: telemetry off
}

// begin starts the bookkeeping of a request and returns ctx and params
// as the request goes out (with telemetry, carrying its trace context).
// l is the served client that calls (nil: none).
func (a *Aggregator) begin(ctx context.Context, l *listener, src Source, method string, params json.RawMessage) (context.Context, json.RawMessage, outgoing) {
	var o outgoing
	if l != nil {
		o.end = a.callers.begin(src.Name(), l)
	}
	sent := params
	if a.tel != nil {
		var call telemetry.Call
		ctx, sent, call = a.startCall(ctx, src, method, params)
		o.call = &call
	}
	if audited(method) && a.opts.Audit != nil {
		o.start, o.run, o.who = time.Now(), runOf(ctx), principal.Of(ctx)
	}
	return ctx, sent, o
}

// finish ends the bookkeeping with the source's answer; params are as
// the client sent them, for the audit trail.
func (o outgoing) finish(a *Aggregator, l *listener, src Source, method string, params, res json.RawMessage, err error) {
	if o.end != nil {
		o.end()
	}
	if !o.start.IsZero() {
		a.audit(l, o.start, o.run, o.who, src.Name(), method, params, res, err)
	}
	if o.call != nil {
		endCall(*o.call, res, err)
	}
}

// drop ends the bookkeeping of a request that was not sent after all.
func (o outgoing) drop() {
	if o.end != nil {
		o.end()
	}
	if o.call != nil {
		o.call.Drop()
	}
}

// clientFor returns the served client that answers a request from
// server, or nil when none can (see the top of this file).
func (a *Aggregator) clientFor(server, method string, params json.RawMessage) *listener {
	alive := func(l *listener) bool { _, ok := a.listeners.Load(l); return ok && l.serving() }
	can := func(l *listener) bool { return l.can == nil || l.can(method, params) }
	if l := a.callers.of(server, alive, can); l != nil {
		return l
	}
	return a.client(can)
}
