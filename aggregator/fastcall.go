package aggregator

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/upstream"
)

// sender is a source that takes a request without a goroutine waiting
// for its answer: an upstream over stdio (upstream.Client.Send).
type sender interface {
	Send(ctx context.Context, method string, params json.RawMessage,
		done func(json.RawMessage, error)) (cancel func(cause error), ok bool)
}

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
func (s *stdioServer) sendCall(ctx context.Context, m message, done func(json.RawMessage, *rpcError)) (cancel func(error), ok bool) {
	a := s.a
	if m.Method != "tools/call" || !a.isReady() {
		return nil, false
	}
	name, err := paramString(m.Params, "name")
	if err != nil {
		return nil, false
	}
	// The listener, progress and the outbox's flusher come with ctx
	// (requestContext); the batch only for this send, on the read loop.
	ctx = upstream.WithBatch(ctx, &s.batch) // flushed by readLoop
	if name == proxytool.Name && a.exposeProxy() {
		return a.proxy.Send(ctx, m.Params, func(res json.RawMessage) { done(res, nil) })
	}
	if !a.served(name) {
		return nil, false
	}
	return a.sendTool(ctx, s.l, name, m.Params, func(res json.RawMessage, err error) {
		done(a.toolOutcome(name, res, err))
	})
}

// sendTool is forwardNamed for tools/call without waiting: it sends the
// call of the tool served as name to a source that can take it now (a
// sender), and reports false, having done nothing, for any other. l is
// the served client that calls (nil: none), as request finds it in ctx.
func (a *Aggregator) sendTool(ctx context.Context, l *listener, name string, params json.RawMessage,
	done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	e, ok := a.Catalog().Tool(name)
	if !ok {
		return nil, false
	}
	src, ok := e.src.(sender)
	if !ok {
		return nil, false
	}
	// As forwardNamed: the upstream's own name in place of the exposed
	// one, every other byte as the client wrote it.
	params, _, err := rawjson.Replace(orEmpty(params), "name", e.quotedOriginal())
	if err != nil {
		return nil, false
	}
	end := func() {}
	if l != nil {
		end = a.callers.begin(e.src.Name(), l) // route.go, as request does
	}
	var start time.Time
	if a.opts.Audit != nil {
		start = time.Now()
	}
	out := params
	var call telemetry.Call
	if a.tel != nil {
		// The only decoding on this path, and only with telemetry on: the
		// tool's name, and the _meta the trace context goes in.
		ctx, out, call = a.startCall(ctx, e.src, "tools/call", params)
	}
	cancel, sent := src.Send(ctx, "tools/call", out, func(res json.RawMessage, err error) {
		end()
		if !start.IsZero() {
			a.auditFor(l, start, e.src.Name(), "tools/call", params, res, err)
		}
		if a.tel != nil {
			endCall(call, res, err)
		}
		if err != nil {
			a.offerStepUp(e.src, err)
		} else {
			res = a.capResultFor(l, e.src, res)
		}
		done(res, err)
	})
	if !sent {
		end()
		if a.tel != nil {
			call.Drop() // not sent: handle sends it again
		}
	}
	return cancel, sent
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
