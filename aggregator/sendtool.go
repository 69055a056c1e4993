package aggregator

import (
	"context"
	"encoding/json"
)

// sender is a source that takes a request without a goroutine waiting
// for its answer: an upstream over stdio (upstream.Client.Send).
type sender interface {
	Send(ctx context.Context, method string, params json.RawMessage,
		done func(json.RawMessage, error)) (cancel func(cause error), ok bool)
}

// sendTool is forwardNamed for tools/call without waiting: the same
// resolution (resolveNamed), bookkeeping (begin) and settling (settle),
// with the call sent to a source that can take it now (a sender) and done
// run on its reader. It reports false, having done nothing, for a name not
// served (the waiting path explains it) or any other source. One closure
// is the only allocation of its own: nothing it holds is reassigned. l
// is the served client that calls (nil: none), as request finds it in
// ctx.
func (a *Aggregator) sendTool(ctx context.Context, l *listener, name string, params json.RawMessage,
	done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	e, renamed, err := a.resolveNamed(name, params, KindTool)
	if err != nil {
		return nil, false
	}
	snd, ok := e.src.(sender)
	if !ok {
		return nil, false
	}
	cctx, sent, o := a.begin(ctx, l, e.src, "tools/call", renamed)
	cancel, ok = snd.Send(cctx, "tools/call", sent, func(res json.RawMessage, err error) {
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
