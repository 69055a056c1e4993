package aggregator

import (
	"encoding/json"
	"sync"
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

// clientFor returns the served client that answers a request from
// server, or nil when none can (see the top of this file).
func (a *Aggregator) clientFor(server, method string, params json.RawMessage) *listener {
	alive := func(l *listener) bool { _, ok := a.listeners.Load(l); return ok && l.serving() }
	can := func(l *listener) bool { return l.can(method, params) }
	if l := a.callers.of(server, alive, can); l != nil {
		return l
	}
	return a.client(can)
}
