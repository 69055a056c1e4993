package aggregator

import (
	"context"
	"encoding/json"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// sendCall starts a tools/call of an upstream tool straight from the
// read loop and has the upstream's reader deliver the answer to done,
// which must not block. The request is written by this goroutine (or
// held for the read loop's batch), and the answer is written to the
// client by the reader's (held for the outbox's next Flush): no goroutine
// per call and no hand-off between goroutines, which were half of a
// call's cost over a byte-copying relay (BenchmarkCallSequential).
//
// The proxy tool's calls of a tool go the same way (proxytool.Proxy.Send).
// cancel ends the call early; ctx is the read loop's, which never ends
// (see running). ok is false, having done nothing, when the call needs
// handle: any other method or proxy action, a tool not served, a source
// that is not an upstream connected over stdio, or before the first
// catalog is complete.
func (s *legacySession) sendCall(ctx context.Context, m message, done func(json.RawMessage, *jsonrpc.Error)) (cancel func(error), ok bool) {
	a := s.a
	if m.Method != "tools/call" || !a.isReady() {
		return nil, false
	}
	name, err := paramString(m.Params, "name")
	if err != nil {
		return nil, false
	}
	// Progress, the read loop's batch and the outbox's flusher come with
	// s.send, the same for every call of the session.
	if name == proxytool.Name && a.exposeProxy() {
		return a.proxyFor(s.l).Send(ctx, m.Params, func(res json.RawMessage) { done(res, nil) })
	}
	if !a.served(name) {
		return nil, false
	}
	return a.sendTool(ctx, s.l, &s.send, name, m.Params, func(res json.RawMessage, err error) {
		done(a.toolOutcome(name, res, err))
	})
}

// sendTool is forwardNamed for tools/call without waiting: the same
// resolution (resolveNamed), bookkeeping (begin) and settling (settle),
// with the call sent to a source that can take it now (an upstream over
// stdio) and done run on its reader. It reports false, having done
// nothing, for a name not served (the waiting path explains it) or any
// other source. One closure is the only allocation of its own: nothing it
// holds is reassigned. l is the served client that calls (nil: none), as
// for request; opts what the call carries (its batch only while this
// goroutine sends: see upstream.CallOptions).
func (a *Aggregator) sendTool(ctx context.Context, l *listener, opts *upstream.CallOptions, name string, params json.RawMessage,
	done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	e, renamed, err := a.resolveNamed(name, params, KindTool)
	if err != nil {
		return nil, false
	}
	// Only an upstream takes a call without a goroutine waiting for its
	// answer (over stdio: upstream.Client.Send). Found by its type, not
	// an interface, so that opts stays on the caller's stack.
	snd, ok := e.src.(*upstream.Client)
	if !ok {
		return nil, false
	}
	cctx, sent, o := a.begin(ctx, l, e.src, "tools/call", renamed)
	cancel, ok = snd.Send(cctx, "tools/call", sent, opts, func(res json.RawMessage, err error) {
		o.finish(a, l, e.src, "tools/call", renamed, res, err)
		done(a.settle(l, e.src, "tools/call", res, err))
	})
	if !ok {
		o.drop() // not sent: the waiting path sends it again
	}
	return cancel, ok
}

// isReady reports whether the first catalog is complete (see waitReady).
func (a *Aggregator) isReady() bool {
	if a.parent != nil && !a.parent.isReady() {
		return false
	}
	select {
	case <-a.ready:
		return true
	default:
		return false
	}
}
