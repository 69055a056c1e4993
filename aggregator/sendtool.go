package aggregator

import (
	"context"
	"encoding/json"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/upstream"
)

// sendTool is forwardNamed for tools/call without waiting: the same
// resolution (resolveNamed) into the same call, run by send, with done
// run on the source's reader. It reports false, having done nothing, for
// a name not served (the waiting path explains it) or a source that
// cannot take a call without a goroutine waiting. l is the served client
// that calls (nil: none); opts what the call carries (see send); via how
// l reads back a result cut by its cap.
func (a *Aggregator) sendTool(ctx context.Context, l *listener, opts *upstream.CallOptions, name string, params json.RawMessage,
	via results.Via, done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	e, renamed, err := a.resolveNamed(name, params, KindTool)
	if err != nil {
		return nil, false
	}
	return a.send(ctx, sourceCall{l: l, src: e.src, entry: e, method: "tools/call", params: renamed, via: via}, opts, done)
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
