package core

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx/mcpx/frame"
	"github.com/mcpx/mcpx/internal/waitfor"
)

// QueueLen is how many messages may wait for a client that reads slowly
// (on stdio; per HTTP session).
const QueueLen = 256

// outbox is the single writer of a stdio server: messages leave in the
// order they were queued, each whole on its own line.
//
// An answer finding nothing queued is written at once by the goroutine
// that has it, under the writer's lock, rather than handed to the writer
// goroutine: one scheduler hand-off less per call (the largest cost of a
// call after the pipe syscalls). Anything queued, a notification that
// must not wait included, goes first, so order is kept.
//
// Responses and requests are never dropped: queuing one waits while the
// client reads slowly (it gives up only when the server is shutting
// down), which holds up only the call it answers. Notifications relayed
// from upstreams (progress, log messages, resource updates) are queued
// from the upstreams' readers, which must never wait on the client: when
// the queue is full they are dropped, with one log line per stall, so a
// client that stops reading cannot stop the upstreams.
type outbox struct {
	ctx  context.Context
	w    io.Writer
	log  *slog.Logger
	max  int64 // maxMessageBytes; 0 means no limit
	q    chan wire
	stop chan struct{} // closed by close: drain q, flush, end
	done chan struct{}

	wmu   sync.Mutex    // held while writing to bw
	bw    *bufio.Writer // guarded by wmu
	carry parts         // guarded by wmu: the rest of a line tryDirect began, written first
	// try writes to the client without waiting (see tryDirect); nil
	// when w cannot.
	try    func([]byte) (n int, blocked bool, err error)
	queued atomic.Int64 // messages in q or being written from it
	failed atomic.Pointer[context.CancelCauseFunc]

	stall stall // notifications dropped while the client lags

	hmu  sync.Mutex // never held while writing
	held []byte     // answers held for one write, one per line (see hold)
}

func newOutbox(ctx context.Context, w io.Writer, logger *slog.Logger, max int64) *outbox {
	o := &outbox{ctx: ctx, w: w, log: logger, max: max, q: make(chan wire, QueueLen),
		stop: make(chan struct{}), done: make(chan struct{}), bw: bufio.NewWriterSize(w, 64<<10)}
	if t, ok := w.(TryWriter); ok {
		o.try = t.TryWrite
	}
	return o
}

// TryWriter is an output that can also write without waiting: TryWrite
// writes what the output takes at once and reports blocked when the rest
// would have to wait (a pipe in non-blocking mode, as package nbpipe's
// Writer is). Over one, the answers an upstream's reader delivers are
// written from that reader, and only what does not fit waits for the
// outbox's writer; over any other output they all go through the writer.
type TryWriter interface {
	io.Writer
	TryWrite(p []byte) (n int, blocked bool, err error)
}

// run writes until close; a failed write ends the server through cancel.
func (o *outbox) run(cancel context.CancelCauseFunc) {
	defer close(o.done)
	o.failed.Store(&cancel)
	write := func(msg wire) error {
		o.wmu.Lock()
		defer o.wmu.Unlock()
		o.writeCarry()
		msg.writeTo(o.bw) // a zero wire only wakes the writer for the carry
		// Flush when nothing else is waiting, so bursts share a syscall.
		if o.queued.Add(-1) == 0 {
			return o.bw.Flush()
		}
		return nil
	}
	for {
		select {
		case msg := <-o.q:
			if err := write(msg); err != nil {
				cancel(err)
				return
			}
		case <-o.stop:
			for {
				select {
				case msg := <-o.q:
					if write(msg) != nil {
						return
					}
				default:
					o.wmu.Lock()
					o.writeCarry()
					o.bw.Flush()
					o.wmu.Unlock()
					return
				}
			}
		}
	}
}

// writeCarry puts the rest of a line tryDirect began ahead of anything
// else; wmu must be held.
func (o *outbox) writeCarry() {
	for i, p := range o.carry {
		if len(p) > 0 {
			o.bw.Write(p)
		}
		o.carry[i] = nil
	}
}

// close writes what is queued and stops the writer, waiting at most
// within for a client that does not read; later messages are discarded.
// It reports whether everything was written.
func (o *outbox) close(within time.Duration) bool {
	close(o.stop)
	if waitfor.Closed(o.done, within) {
		return true
	}
	o.log.Warn("the client is not reading mcpx's output: gave up writing to it", "queued", len(o.q))
	return false
}

// oneLine makes msg one line: a message with a newline inside (an
// upstream over HTTP may pretty-print) is compacted, since on stdio a
// newline ends the message.
func oneLine(msg []byte) []byte {
	if bytes.IndexByte(msg, '\n') < 0 {
		return msg
	}
	var b bytes.Buffer
	if json.Compact(&b, msg) == nil {
		return b.Bytes()
	}
	// Not JSON (a source's bug): still never split the line.
	return bytes.ReplaceAll(msg, []byte("\n"), []byte(" "))
}

// overLimit reports, with a log line, a message too large to send.
func (o *outbox) overLimit(msg []byte, what string) bool {
	if o.max <= 0 || int64(len(msg)) <= o.max {
		return false
	}
	o.log.Warn("dropped a " + what + " to the client: " + (&frame.TooLongError{Size: int64(len(msg)), Limit: o.max}).Error())
	return true
}

// raw queues one complete JSON-RPC message that must not be lost, waiting
// for room while the client reads slowly. One over maxMessageBytes is
// dropped with a log line (use result for answers, which become errors).
func (o *outbox) raw(msg []byte) {
	msg = oneLine(msg)
	if o.overLimit(msg, "message") {
		return
	}
	o.send(wire{head: msg})
}

// send writes or queues one line that must not be lost, waiting for room
// while the client reads slowly.
func (o *outbox) send(msg wire) {
	if o.direct(msg) {
		return
	}
	o.queued.Add(1)
	select {
	case o.q <- msg:
	case <-o.ctx.Done():
		o.queued.Add(-1)
	case <-o.done:
		o.queued.Add(-1)
	}
}

// direct writes msg at once when nothing is queued and no one is
// writing, and reports whether it did.
func (o *outbox) direct(msg wire) bool {
	if !o.lockIdle() {
		return false
	}
	defer o.wmu.Unlock()
	msg.writeTo(o.bw)
	if err := o.bw.Flush(); err != nil {
		o.fail(err)
	}
	return true
}

// notify queues a notification without ever waiting: when the client has
// fallen a whole queue behind it is dropped, and the stall is logged once.
func (o *outbox) notify(msg []byte) {
	msg = oneLine(msg)
	if o.overLimit(msg, "notification") {
		return
	}
	o.queued.Add(1)
	select {
	case o.q <- wire{head: msg}:
		o.stall.delivered(o.log)
	default:
		o.queued.Add(-1)
		o.stall.dropped(o.log)
	}
}

// stall counts the notifications dropped while a client lags, and logs
// its start and end once each.
type stall struct {
	mu sync.Mutex
	n  int
}

func (s *stall) dropped(log *slog.Logger) {
	s.mu.Lock()
	s.n++
	first := s.n == 1
	s.mu.Unlock()
	if first {
		log.Warn("the client is not keeping up with mcpx's output: dropping notifications until it does")
	}
}

func (s *stall) delivered(log *slog.Logger) {
	s.mu.Lock()
	n := s.n
	s.n = 0
	s.mu.Unlock()
	if n > 0 {
		log.Info("the client is reading again", "dropped_notifications", n)
	}
}

// progress is notify: stdio has one stream, whatever the progress is of.
func (o *outbox) progress(_ json.RawMessage, msg []byte) { o.notify(msg) }

// unanswered has nothing to do: a line needs no answer to end.
func (o *outbox) unanswered(json.RawMessage) {}

// result queues the answer to a request; one over maxMessageBytes becomes
// an error that says so.
func (o *outbox) result(id json.RawMessage, result json.RawMessage) {
	if msg, ok := o.answerWire(id, result); ok {
		o.send(msg)
	}
}

// answerLine is the message answering id with result; when it would be
// over maxMessageBytes, an error saying so is queued instead and ok is
// false.
func (o *outbox) answerLine(id json.RawMessage, result json.RawMessage) (msg []byte, ok bool) {
	msg, tooLong := encodeAnswer(o.max, id, result)
	if tooLong != nil {
		o.error(id, CodeInternalError, "the answer is too large to send: "+tooLong.Error(), nil)
		return nil, false
	}
	return msg, true
}

// answerWire is answerLine as a wire: a large answer in parts, its
// result not copied (see BigAnswer).
func (o *outbox) answerWire(id json.RawMessage, result json.RawMessage) (wire, bool) {
	if isBig(result) {
		if o.max > 0 && int64(answerSize(id, result)) > o.max {
			o.error(id, CodeInternalError, "the answer is too large to send: "+
				(&frame.TooLongError{Size: int64(answerSize(id, result)), Limit: o.max}).Error(), nil)
			return wire{}, false
		}
		return bigWire(id, result), true
	}
	msg, ok := o.answerLine(id, result)
	return wire{head: msg}, ok
}

// BigAnswer is the size from which a transport writes an answer's result
// from where it is, in parts (here a wire of three), rather than copied
// into a message of its own: a result of many megabytes is then held
// once, by whoever made it, not twice. Below it one piece costs less
// than three.
const BigAnswer = 64 << 10

// isBig reports whether an answer with result goes as three parts: a
// big result on one line (one with a newline inside is compacted into
// a line of its own).
func isBig(result json.RawMessage) bool {
	return len(result) >= BigAnswer && bytes.IndexByte(result, '\n') < 0
}

// bigWire is the answer to id with result, in three parts.
func bigWire(id, result json.RawMessage) wire {
	head := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":`)+len(id))
	head = append(append(append(head, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...)
	return wire{head: head, body: result, tail: answerEnd}
}

// answerEnd closes an answer written in parts; never written to.
var answerEnd = []byte("}")

// wire is one message for the client, written as one line: head alone,
// or for a big answer its head, its result as the source sent it (body)
// and its closing brace (tail), written in turn so that the result is
// never copied into a line of its own. A zero wire only wakes the
// writer, for the carry.
type wire struct{ head, body, tail []byte }

// writeTo writes w and its newline to bw; a large part goes past bw's
// buffer straight to the writer.
func (w wire) writeTo(bw *bufio.Writer) {
	if w.head == nil && w.body == nil {
		return
	}
	bw.Write(w.head)
	if w.body != nil {
		bw.Write(w.body)
		bw.Write(w.tail)
	}
	bw.WriteByte('\n')
}

// parts is what tryDirect leaves of a line for the writer: a one-piece
// line's rest, or a big answer's, its newline included.
type parts [4][]byte

// encodeAnswer is the message, one line, answering id with result, unless
// it would be over max (maxMessageBytes; 0: no limit).
func encodeAnswer(max int64, id json.RawMessage, result json.RawMessage) ([]byte, *frame.TooLongError) {
	size := answerSize(id, result)
	if max > 0 && int64(size) > max {
		return nil, &frame.TooLongError{Size: int64(size), Limit: max}
	}
	msg := make([]byte, 0, size+1) // room for the newline tryDirect adds
	return oneLine(appendAnswer(msg, id, result)), nil
}

// answerSize is the length of the answer to id with result.
func answerSize(id, result json.RawMessage) int {
	return len(`{"jsonrpc":"2.0","id":,"result":}`) + len(id) + len(result)
}

// appendAnswer appends the answer to id with result to b.
func appendAnswer(b []byte, id, result json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// postLine writes msg at once when it can (tryDirect) and queues it
// otherwise, never waiting: it is what an upstream's reader calls, which
// must not be held by a slow client. When the queue is full, msg waits on
// a goroutine of its own instead, never dropped. settled reports that
// msg was written whole (or the write failed), so its bytes are free.
func (o *outbox) postLine(msg wire) (settled bool) {
	if o.try != nil {
		if ok, settled := o.tryDirect(msg); ok {
			return settled
		}
	}
	o.enqueue(msg)
	return false
}

// enqueue queues msg without waiting; when the queue is full, msg waits
// for room on a goroutine of its own instead, never dropped.
func (o *outbox) enqueue(msg wire) {
	o.queued.Add(1)
	select {
	case o.q <- msg:
	default:
		o.queued.Add(-1)
		go o.send(msg)
	}
}

// error queues an error answer. It never waits: the stdin reader sends
// these (parse errors, over-long requests), and a client that sends while
// it does not read must not stop mcpx from reading on, and seeing EOF.
// When the queue is full the answer waits on its own goroutine instead,
// still never dropped.
func (o *outbox) error(id json.RawMessage, code int, message string, data json.RawMessage) {
	o.enqueue(wire{head: errorLine(id, code, message, data)})
}

// errorLine is the message answering id with an error.
func errorLine(id json.RawMessage, code int, message string, data json.RawMessage) []byte {
	e := struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{code, message, data}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return b
}
