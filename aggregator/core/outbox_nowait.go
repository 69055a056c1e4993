package core

import (
	"bytes"
	"encoding/json"
)

// This file is the outbox's side for upstreams' readers, which deliver
// answers to calls sent from the read loop (fastcall.go) and must never
// wait on the client: answers are held, then written together at Flush
// in one non-blocking write when nothing is queued, else queued.

// maxKeptHeld bounds the buffer of held answers kept between flushes:
// one that carried a large result is let go.
const maxKeptHeld = 64 << 10

// hold adds the answer to a request to what the next Flush writes, so
// that answers an upstream's reader delivers together leave in one write
// (callopt.Flusher). It never waits.
//
// Answers are written straight into one buffer, which Flush keeps for
// the next ones when its write was done at once: a line per answer, and
// a copy of them all joined, were a third of the allocations under many
// concurrent calls (BenchmarkCallConcurrent). A result is still copied
// once, however large.
func (o *outbox) hold(id json.RawMessage, result json.RawMessage) {
	if isBig(result) {
		// Not copied into the held buffer: what is held goes first,
		// then this answer, in parts, in order.
		if msg, ok := o.answerWire(id, result); ok {
			o.Flush()
			o.postLine(msg)
		}
		return
	}
	var msg []byte // the answer, when it is not written in place
	if bytes.IndexByte(result, '\n') >= 0 || o.max > 0 && int64(answerSize(id, result)) > o.max {
		// Rare: answerLine compacts it, or answers that it is too large.
		var ok bool
		if msg, ok = o.answerLine(id, result); !ok {
			return
		}
	}
	o.hmu.Lock()
	defer o.hmu.Unlock()
	if msg != nil {
		o.held = append(heldRoom(o.held, len(msg)), msg...)
		return
	}
	o.held = appendAnswer(heldRoom(o.held, answerSize(id, result)), id, result)
}

// heldRoom returns held, with the newline that ends the message it holds
// last, ready for n more bytes and the newline tryDirect adds after them,
// so that none of those appends copies held again.
func heldRoom(held []byte, n int) []byte {
	if need := len(held) + n + 2; need > cap(held) {
		grown := make([]byte, len(held), max(need, 2*cap(held)))
		copy(grown, held)
		held = grown
	}
	if len(held) > 0 {
		held = append(held, '\n')
	}
	return held
}

// Flush writes the answers held: at once, in one write, when
// nothing is queued and the client's pipe takes them, else queued. It
// never waits.
func (o *outbox) Flush() {
	o.hmu.Lock()
	held := o.held
	if len(held) == 0 {
		o.hmu.Unlock()
		return // the buffer stays for the next answers
	}
	o.held = nil
	o.hmu.Unlock()
	if !o.postLine(wire{head: held}) || cap(held) > maxKeptHeld { // the writer adds the last newline
		return
	}
	o.hmu.Lock()
	if o.held == nil {
		o.held = held[:0]
	}
	o.hmu.Unlock()
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
// anything queued after. ok is false when msg must be queued; settled
// is false when the writer still has some of it to write.
func (o *outbox) tryDirect(msg wire) (ok, settled bool) {
	if !o.lockIdle() {
		return false, false
	}
	defer o.wmu.Unlock()
	var line parts
	if msg.body == nil {
		line[0] = append(msg.head, '\n') // answerLine and heldRoom left room for it
	} else {
		line = parts{msg.head, msg.body, msg.tail, []byte("\n")}
	}
	i, n, blocked, err := 0, 0, false, error(nil)
	for ; i < len(line) && err == nil && !blocked; i++ {
		if len(line[i]) > 0 {
			n, blocked, err = o.try(line[i])
		}
	}
	switch {
	case err == nil && !blocked:
		return true, true
	case err == nil:
		i-- // the part the pipe took n bytes of
		copy(o.carry[:], line[i:])
		o.carry[0] = line[i][n:]
		o.queued.Add(1)
		select {
		case o.q <- wire{}: // wakes the writer, which writes the carry first
		default:
			go func() {
				select {
				case o.q <- wire{}:
				case <-o.done:
				}
			}()
		}
	default:
		o.fail(err)
		return true, true
	}
	return true, false
}
