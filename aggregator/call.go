package aggregator

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/upstream"
)

// This file is the one way a request reaches a source. A request is
// resolved once into a sourceCall, by what it names: an exposed name
// (resolveNamed, for forwardNamed and sendTool), a URI (forwardURI), a
// passthrough route (routed), a completion's ref (complete). The call
// then runs in one of two ways: do, which waits for the answer, or send,
// which has the source's reader deliver it (the stdio fast path, where no
// goroutine waits). Both pass the same links in the same order, so a
// step every request needs goes here and reaches every entry point
// (TestEveryEntryKeepsTheBooks walks them):
//
//  1. the gate, before a call exists: only what the caller's catalog
//     serves resolves (its profile's view, the config's filters,
//     pinning);
//  2. begin: the call counted as its client's, so that a question its
//     source asks meanwhile reaches that client (route.go); its span; its
//     start on the audit trail;
//  3. the source;
//  4. finish: the count ended, the audit line, the span and its metrics;
//  5. settle, for a call that names a catalog entry: a failure may offer
//     a step-up login, and a tool's result is capped.

// sourceCall is one request resolved to the source that answers it.
type sourceCall struct {
	l      *listener // the served client that calls; nil: none
	src    Source
	entry  *Entry // the tool or prompt it names, for settle; nil: none (a URI, a completion)
	method string
	params json.RawMessage // as the source gets them: its own name in place of the exposed one
	via    results.Via     // how l reads back a result cut by its cap
}

// do runs c and waits for its answer.
func (a *Aggregator) do(ctx context.Context, c sourceCall) (json.RawMessage, error) {
	cctx, sent, o := a.begin(ctx, c.l, c.src, c.method, c.params)
	opts := c.l.options()
	res, err := requestWith(cctx, c.src, c.method, sent, &opts)
	o.finish(a, c.l, c.src, c.method, c.params, res, err)
	return a.settle(c, res, err)
}

// send runs c without waiting, when its source can take it now (an
// upstream over stdio), and has done called on the source's reader with
// the answer. It reports false, having done nothing, for any other
// source: do sends it then. One closure is the only allocation of its
// own (nothing it holds is reassigned); opts is what the call carries
// (its batch only while this goroutine sends: see upstream.CallOptions).
func (a *Aggregator) send(ctx context.Context, c sourceCall, opts *upstream.CallOptions, done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	// Found by its type, not an interface, so that opts stays on the
	// caller's stack.
	snd, ok := c.src.(*upstream.Client)
	if !ok {
		return nil, false
	}
	cctx, sent, o := a.begin(ctx, c.l, c.src, c.method, c.params)
	cancel, ok = snd.Send(cctx, c.method, sent, opts, func(res json.RawMessage, err error) {
		o.finish(a, c.l, c.src, c.method, c.params, res, err)
		done(a.settle(c, res, err))
	})
	if !ok {
		o.drop() // not sent: the waiting path sends it again
	}
	return cancel, ok
}

// settle is what the source's answer to c becomes when c names a
// catalog entry: a failure may offer the user a step-up login, and a
// tool's result is capped, its notes naming c.via as the way to read the
// rest.
func (a *Aggregator) settle(c sourceCall, res json.RawMessage, err error) (json.RawMessage, error) {
	switch {
	case c.entry == nil:
	case err != nil:
		a.offerStepUp(c.entry.src, err)
	case c.method == "tools/call":
		res = a.capResult(c.l, c.entry, res, c.via)
	}
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
