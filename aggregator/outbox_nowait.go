package aggregator

import (
	"encoding/json"
	"errors"

	"github.com/mcpx/mcpx/nbpipe"
)

// This file is the outbox's side for upstreams' readers, which deliver
// answers to calls sent from the read loop (fastcall.go) and must never
// wait on the client: answers are held, then written together at Flush
// in one non-blocking write when nothing is queued, else queued.

// joinMax bounds the answers Flush copies into one write: past it the
// copy would cost more than the write(2) calls it saves, and a large
// result is copied no more than it already is.
const joinMax = 64 << 10

// hold keeps the answer to a request for the next Flush, so that answers
// an upstream's reader delivers together leave in one write
// (upstream.Flusher). It never waits.
func (o *outbox) hold(id json.RawMessage, result json.RawMessage) {
	msg, ok := o.answerLine(id, result)
	if !ok {
		return
	}
	o.hmu.Lock()
	o.held = append(o.held, msg)
	o.hmu.Unlock()
}

// Flush writes the answers held: at once, in one write, when
// nothing is queued and the client's pipe takes them, else queued. It
// never waits.
func (o *outbox) Flush() {
	o.hmu.Lock()
	held := o.held
	o.held = nil
	o.hmu.Unlock()
	size := 0
	for _, msg := range held {
		size += len(msg) + 1
	}
	if len(held) < 2 || size > joinMax {
		for _, msg := range held {
			o.postLine(msg) // in order: after the first, the rest queue behind
		}
		return
	}
	joined := make([]byte, 0, size)
	for i, msg := range held {
		if i > 0 {
			joined = append(joined, '\n')
		}
		joined = append(joined, msg...)
	}
	o.postLine(joined) // the writer adds the last newline
}

// fail ends the server after a write to the client failed.
func (o *outbox) fail(err error) {
	if cancel := o.failed.Load(); cancel != nil {
		(*cancel)(err)
	}
}

// lockIdle takes the writer's lock, without waiting, when nothing is
// queued or being written and the writer has not flushed for the last
// time; it reports whether it did.
func (o *outbox) lockIdle() bool {
	if o.queued.Load() != 0 || !o.wmu.TryLock() {
		return false
	}
	select {
	case <-o.done:
	default:
		if o.queued.Load() == 0 && o.bw.Buffered() == 0 {
			return true
		}
	}
	o.wmu.Unlock()
	return false
}

// tryDirect writes msg at once, with no hand-off to the writer, when
// nothing is queued or being written; it never waits on the client. What
// the client's pipe does not take at once is left to the writer, ahead of
// anything queued after. It reports false when msg must be queued.
func (o *outbox) tryDirect(msg []byte) bool {
	if !o.lockIdle() {
		return false
	}
	defer o.wmu.Unlock()
	line := append(msg, '\n') // answerLine left room for it
	n, err := o.try(line)
	switch {
	case err == nil:
	case errors.Is(err, nbpipe.ErrWouldBlock):
		o.carry = line[n:]
		o.queued.Add(1)
		select {
		case o.q <- nil: // wakes the writer, which writes the carry first
		default:
			go func() {
				select {
				case o.q <- nil:
				case <-o.done:
				}
			}()
		}
	default:
		o.fail(err)
	}
	return true
}
