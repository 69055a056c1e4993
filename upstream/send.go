package upstream

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/upstream/stdio"
)

// This file sends requests without a goroutine waiting for their answer:
// the path of calls from mcpx's serving loop to servers over stdio.

// Send sends a request without waiting for its answer, when the server
// is connected over stdio. done gets what [Client.RequestWith] would
// return with opts, exactly once, usually on the connection's reader, so
// it must not block; opts.Batch and opts.Flusher apply here only (see
// [CallOptions]). The same limits apply: past maxConcurrent the request waits in
// line with Request's, without a goroutine, and is written by whichever
// call frees a slot; ctx ending, callTimeout or maxCallTime take it out
// of the line or cancel it.
//
// cancel ends the request as ctx ending would: done gets the cause, and
// the server is sent notifications/cancelled. A caller
// that keeps its own record of each call cancels through it and passes a
// ctx that never ends (context.WithoutCancel): a context per call, and
// the watch on it, were a tenth of a sequential call's CPU
// (BenchmarkCallSequential). After done, cancel does nothing.
//
// ok is false, having sent nothing, when the request must go through
// Request instead: a remote server, or one not connected yet. Send exists
// for the serving loop: answering a call there needs no goroutine of its
// own and no hand-off from the reader to it, the largest costs of a call
// after the pipe syscalls.
func (c *Client) Send(ctx context.Context, method string, params json.RawMessage, opts *CallOptions,
	done func(json.RawMessage, error)) (cancel func(cause error), ok bool) {
	if other, end := c.forModern(optionsOf(opts), method, params); other != nil {
		return c.sendOther(ctx, other, end, method, params, opts, done)
	}
	c.mu.Lock()
	cn := c.conn
	var pipe *stdio.Transport
	if cn != nil {
		pipe, _ = cn.tr.(*stdio.Transport)
	}
	if pipe == nil {
		c.mu.Unlock()
		return nil, false
	}
	c.begin()
	c.mu.Unlock()
	o := optionsOf(opts) // o.Batch only while this goroutine sends: not for a later turn
	pass, flusher, progress := o.PassInput, o.Flusher, o.Progress
	lc := c.limits.start(method, params)
	touch := lc // what progress keeps alive
	if c.limits.none() {
		touch = nil
	}
	finish := func(res json.RawMessage, err error) {
		lc.stop()
		c.slots.release()
		c.release()
		res, err = c.settle(ctx, cn, method, params, res, err)
		if err == nil && answersInput(cn, pass, res) {
			// A modern server asks the client for input: rare, and
			// it waits for a person, so not on the reader, which then
			// flushes nothing done writes: this goroutine does.
			go func() {
				ctx, lc, stop := c.limitCall(ctx, method, params)
				defer stop()
				done(c.resolveInput(ctx, lc, CallOptions{Progress: progress}, method, params, res))
				if flusher != nil {
					flusher.Flush()
				}
			}()
			return
		}
		done(res, err)
	}
	if c.slots.tryAcquire() {
		lc.onEnd(cn.start(ctx, pipe, touch, o, method, params, finish))
		return lc.cancel, true
	}
	c.sendInLine(ctx, cn, pipe, o, lc, touch, method, params, finish, done)
	return lc.cancel, true
}

// sendInLine is Send past maxConcurrent: the request waits in line, with
// no goroutine, and is started by whichever call frees a slot. Until then
// ctx ending or a limit running out take it out of the line. o.Batch is
// used only if it starts at once, on the sending goroutine.
func (c *Client) sendInLine(ctx context.Context, cn *conn, pipe *stdio.Transport, o CallOptions, lc, touch *limitedCall, method string,
	params json.RawMessage, finish, done func(json.RawMessage, error)) {
	var stopWaiting, withdrawing atomic.Pointer[func() bool]
	giveUp := func(err error) {
		w := withdrawing.Load()
		if w == nil || !(*w)() {
			return // it has its slot: cn.start and its end hook end it from there
		}
		lc.stop()
		c.release()
		done(c.settle(ctx, cn, method, params, nil, err))
	}
	lc.onEnd(giveUp)
	now, withdraw := c.slots.enqueue(func() {
		if unwait := stopWaiting.Load(); unwait != nil {
			(*unwait)() // else its goroutine would start when the call ends
		}
		later := o
		later.Batch = nil // the sender's batch is not this goroutine's
		lc.onEnd(cn.start(ctx, pipe, touch, later, method, params, finish))
	})
	if now {
		lc.onEnd(cn.start(ctx, pipe, touch, o, method, params, finish))
		return
	}
	withdrawing.Store(&withdraw)
	if ctx.Done() != nil { // the serving loop's never ends: it cancels through lc
		unwait := context.AfterFunc(ctx, func() { giveUp(context.Cause(ctx)) })
		stopWaiting.Store(&unwait)
	}
	if err := lc.endedBy(); err != nil {
		giveUp(err) // ran out or was cancelled before it could be withdrawn
	}
}

// start sends a raw request over a stdio pipe, or leaves it in o.Batch
// when that is not nil, and returns without waiting: done gets the result
// or error exactly once when the answer comes (on the pipe's reader, so
// it must not block), the transport ends, or ctx does, which also sends
// notifications/cancelled; o.Flusher, if any, is flushed after it. touch
// is the call's limits, which progress for it keeps alive; nil when it
// has none. o.Progress gets the server's progress for it.
//
// The returned abort ends the request when a limit runs out (with the
// *TimeoutError) or its caller cancels it, as ctx ending would; an answer
// that came first wins.
func (cn *conn) start(ctx context.Context, pipe *stdio.Transport, touch *limitedCall, o CallOptions, method string,
	params json.RawMessage, done func(json.RawMessage, error)) (abort func(error)) {
	if err := ctx.Err(); err != nil {
		done(nil, err)
		return noAbort
	}
	key := cn.ownID(`"mcpx-`, `"`) // the id as JSON, which pending is keyed by
	id := key[1 : len(key)-1]
	params, routed := cn.routeProgress(id, touch, o.Progress, params)
	var line []byte
	switch m := cn.meta.Load(); {
	case m != nil:
		line = stdio.RequestLine(json.RawMessage(key), method, spliceMeta(params, *m))
	case cn.protocol != "":
		line = legacyRequestLine(json.RawMessage(key), method, params) // hopmeta.go
	default:
		line = stdio.RequestLine(json.RawMessage(key), method, params)
	}
	var stopWatch func() bool
	finish := func(resp *jsonrpc.Message, err error) {
		if stopWatch != nil {
			stopWatch()
		}
		cn.unroute(id, routed)
		f := o.Flusher
		if err != nil {
			// Rare, and outcome may wait a moment for the exit status
			// of a child that died: not on the reader.
			go func() {
				done(cn.outcome(ctx, id, method, nil, err))
				if f != nil {
					f.Flush()
				}
			}()
			return
		}
		if f != nil {
			pipe.FlushAfterRead(f) // before done: the flush surely follows it
		}
		done(cn.outcome(ctx, id, method, resp, nil))
	}
	if ctx.Done() != nil {
		// Registered before the request goes out, so an answer racing
		// the end of ctx is settled by forget: one of them answers.
		watching := make(chan struct{})
		stopWatch = context.AfterFunc(ctx, func() {
			<-watching
			if pipe.Forget(key) {
				finish(nil, ctx.Err())
			}
		})
		defer close(watching)
	}
	pipe.Begin(ctx, o.Batch, key, line, finish)
	return func(cause error) {
		if pipe.Forget(key) {
			finish(nil, aborted{cause})
		}
	}
}

// noAbort is the abort of a request that never went out.
func noAbort(error) {}

// aborted is how a request that mcpx ended before its answer reaches
// outcome: the server is told, and the caller gets the cause.
type aborted struct{ cause error }

func (a aborted) Error() string { return a.cause.Error() }
func (a aborted) Unwrap() error { return a.cause }
