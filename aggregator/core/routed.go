package core

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mcpx/mcpx/internal/waitfor"
)

// routedOut is the output of a legacy session over HTTP: each message
// the session sends goes to the transport's route with what the session
// says it is, so that the transport puts it on a stream of its own
// without reading it back. One writer goroutine keeps them in order, as
// the outbox does on stdio; like it, answers and requests are never
// dropped (queuing one waits while the route lags), and notifications
// never wait.
type routedOut struct {
	route func(Routed)
	ctx   context.Context
	log   *slog.Logger
	max   int64 // maxMessageBytes; 0 means no limit
	q     chan Routed
	stop  chan struct{} // closed by close: route what is queued, end
	done  chan struct{}

	stall stall // notifications dropped while the client lags
}

// Routed is one message of a legacy session for its transport to route,
// and what it is.
type Routed struct {
	// Msg is the message; nil when there is none to send, only news of
	// Answers: the client cancelled that request, which gets no answer.
	Msg     []byte
	Answers json.RawMessage // the id it answers; nil: not an answer
	Of      json.RawMessage // the id of the request it reports progress on; nil: none
}

func newRoutedOut(ctx context.Context, route func(Routed), logger *slog.Logger, max int64) *routedOut {
	return &routedOut{route: route, ctx: ctx, log: logger, max: max, q: make(chan Routed, QueueLen),
		stop: make(chan struct{}), done: make(chan struct{})}
}

func (o *routedOut) run(context.CancelCauseFunc) {
	defer close(o.done)
	for {
		select {
		case m := <-o.q:
			o.route(m)
		case <-o.stop:
			for {
				select {
				case m := <-o.q:
					o.route(m)
				default:
					return
				}
			}
		}
	}
}

func (o *routedOut) close(within time.Duration) bool {
	close(o.stop)
	if waitfor.Closed(o.done, within) {
		return true
	}
	o.log.Warn("the HTTP client is not reading its streams: gave up writing to them", "queued", len(o.q))
	return false
}

// put queues m, waiting for room while the streams' readers lag.
func (o *routedOut) put(m Routed) {
	select {
	case o.q <- m:
	case <-o.ctx.Done():
	case <-o.done:
	}
}

// enqueue queues m without waiting; when the queue is full, m waits for
// room on a goroutine of its own instead, never dropped.
func (o *routedOut) enqueue(m Routed) {
	select {
	case o.q <- m:
	default:
		go o.put(m)
	}
}

func (o *routedOut) answer(id, result json.RawMessage, wait bool) {
	msg, tooLong := encodeAnswer(o.max, id, result)
	if tooLong != nil {
		o.error(id, CodeInternalError, "the answer is too large to send: "+tooLong.Error(), nil)
		return
	}
	if wait {
		o.put(Routed{Msg: msg, Answers: id})
	} else {
		o.enqueue(Routed{Msg: msg, Answers: id})
	}
}

func (o *routedOut) result(id, result json.RawMessage) { o.answer(id, result, true) }

// hold routes the answer at once: a stream has no write to share.
func (o *routedOut) hold(id, result json.RawMessage) { o.answer(id, result, false) }

// unanswered routes news that id gets no answer, in order with the
// answers already queued: one queued before it still finds its stream.
func (o *routedOut) unanswered(id json.RawMessage) { o.enqueue(Routed{Answers: id}) }

// Flush has nothing to do: hold keeps nothing back.
func (o *routedOut) Flush() {}

func (o *routedOut) error(id json.RawMessage, code int, message string, data json.RawMessage) {
	o.enqueue(Routed{Msg: errorLine(id, code, message, data), Answers: id})
}

func (o *routedOut) raw(msg []byte) {
	msg = oneLine(msg)
	if o.overLimit(msg) {
		return
	}
	o.put(Routed{Msg: msg})
}

func (o *routedOut) notify(msg []byte) { o.post(Routed{Msg: oneLine(msg)}) }

// progress goes to the stream of the request it reports on, of, which the
// core knows: the message is not read back.
func (o *routedOut) progress(of json.RawMessage, msg []byte) {
	o.post(Routed{Msg: oneLine(msg), Of: of})
}

// post queues a notification without waiting: dropped when the queue is
// full, as the outbox does.
func (o *routedOut) post(m Routed) {
	if o.overLimit(m.Msg) {
		return
	}
	select {
	case o.q <- m:
		o.stall.delivered(o.log)
	default:
		o.stall.dropped(o.log)
	}
}

func (o *routedOut) overLimit(msg []byte) bool {
	if o.max <= 0 || int64(len(msg)) <= o.max {
		return false
	}
	o.log.Warn("dropped a message to the HTTP client: over maxMessageBytes", "bytes", len(msg), "limit", o.max)
	return true
}
