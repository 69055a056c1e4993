package aggregator

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// httpOut is a legacy HTTP session's output: each message the session
// core sends is routed to a stream of the session by what the core says
// it is (httpSession.route), never by reading it back. One writer
// goroutine keeps them in order, as the outbox does on stdio; like it,
// answers and requests are never dropped (queuing one waits while a
// stream's reader lags), and notifications never wait.
type httpOut struct {
	s    *httpSession
	ctx  context.Context
	log  *slog.Logger
	max  int64 // maxMessageBytes; 0 means no limit
	q    chan routed
	stop chan struct{} // closed by close: route what is queued, end
	done chan struct{}

	stall stall // notifications dropped while the client lags
}

// routed is one message for a stream and what it is.
type routed struct {
	msg     []byte
	answers json.RawMessage // the id it answers; nil: not an answer
	of      json.RawMessage // the id of the request it reports progress on; nil: none
}

func newHTTPOut(ctx context.Context, s *httpSession, logger *slog.Logger, max int64) *httpOut {
	return &httpOut{s: s, ctx: ctx, log: logger, max: max, q: make(chan routed, outboxLen),
		stop: make(chan struct{}), done: make(chan struct{})}
}

func (o *httpOut) run(context.CancelCauseFunc) {
	defer close(o.done)
	for {
		select {
		case m := <-o.q:
			o.s.route(m)
		case <-o.stop:
			for {
				select {
				case m := <-o.q:
					o.s.route(m)
				default:
					return
				}
			}
		}
	}
}

func (o *httpOut) close(within time.Duration) bool {
	close(o.stop)
	if closedWithin(o.done, within) {
		return true
	}
	o.log.Warn("the HTTP client is not reading its streams: gave up writing to them", "queued", len(o.q))
	return false
}

// put queues m, waiting for room while the streams' readers lag.
func (o *httpOut) put(m routed) {
	select {
	case o.q <- m:
	case <-o.ctx.Done():
	case <-o.done:
	}
}

// enqueue queues m without waiting; when the queue is full, m waits for
// room on a goroutine of its own instead, never dropped.
func (o *httpOut) enqueue(m routed) {
	select {
	case o.q <- m:
	default:
		go o.put(m)
	}
}

func (o *httpOut) answer(id, result json.RawMessage, wait bool) {
	msg, tooLong := encodeAnswer(o.max, id, result)
	if tooLong != nil {
		o.error(id, mcp.INTERNAL_ERROR, "the answer is too large to send: "+tooLong.Error(), nil)
		return
	}
	if wait {
		o.put(routed{msg: msg, answers: id})
	} else {
		o.enqueue(routed{msg: msg, answers: id})
	}
}

func (o *httpOut) result(id, result json.RawMessage) { o.answer(id, result, true) }

// hold routes the answer at once: a stream has no write to share.
func (o *httpOut) hold(id, result json.RawMessage) { o.answer(id, result, false) }

// Flush has nothing to do: hold keeps nothing back.
func (o *httpOut) Flush() {}

func (o *httpOut) error(id json.RawMessage, code int, message string, data json.RawMessage) {
	o.enqueue(routed{msg: errorLine(id, code, message, data), answers: id})
}

func (o *httpOut) raw(msg []byte) {
	msg = oneLine(msg)
	if o.overLimit(msg) {
		return
	}
	o.put(routed{msg: msg})
}

func (o *httpOut) notify(msg []byte) { o.post(routed{msg: oneLine(msg)}) }

// progress goes to the stream of the request it reports on, of, which the
// core knows: the message is not read back.
func (o *httpOut) progress(of json.RawMessage, msg []byte) {
	o.post(routed{msg: oneLine(msg), of: of})
}

// post queues a notification without waiting: dropped when the queue is
// full, as the outbox does.
func (o *httpOut) post(m routed) {
	if o.overLimit(m.msg) {
		return
	}
	select {
	case o.q <- m:
		o.stall.delivered(o.log)
	default:
		o.stall.dropped(o.log)
	}
}

func (o *httpOut) overLimit(msg []byte) bool {
	if o.max <= 0 || int64(len(msg)) <= o.max {
		return false
	}
	o.log.Warn("dropped a message to the HTTP client: over maxMessageBytes", "bytes", len(msg), "limit", o.max)
	return true
}
