package aggregator

import (
	"context"
	"encoding/json"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/upstream"
)

// sendTool is forwardNamed for tools/call without waiting: the same
// resolution (resolveNamed), bookkeeping (begin) and settling (settle),
// with the call sent to a source that can take it now (an upstream over
// stdio) and done run on its reader. It reports false, having done
// nothing, for a name not served (the waiting path explains it) or any
// other source. One closure is the only allocation of its own: nothing it
// holds is reassigned. l is the served client that calls (nil: none), as
// for request; opts what the call carries (its batch only while this
// goroutine sends: see upstream.CallOptions); via how l reads back a
// result cut by its cap.
func (a *Aggregator) sendTool(ctx context.Context, l *listener, opts *upstream.CallOptions, name string, params json.RawMessage,
	via results.Via, done func(json.RawMessage, error)) (cancel func(error), ok bool) {
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
		done(a.settle(l, e, "tools/call", res, err, via))
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
