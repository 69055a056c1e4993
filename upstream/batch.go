package upstream

import (
	"context"
	"sync"
)

// Batch holds back the requests a serving loop sends while more of its
// client's lines are already read, so that each upstream gets them in one
// write: with many calls in flight a client's read brings many requests,
// and a write(2) per request was most of what mcpx added to a call
// (BenchmarkCallConcurrent). The loop calls Flush before it waits to read
// again, so nothing is held longer than the lines already in its buffer
// take to dispatch.
//
// A Batch belongs to the goroutine of one loop; requests join it through
// [CallOptions].Batch of [Client.Send], and only while that call sends
// them: a request that waits its turn under maxConcurrent is written by
// whichever call frees the slot, on its own.
type Batch struct {
	pipes []*pipeTransport
}

// Flush writes what the batch holds, one write per upstream.
func (b *Batch) Flush() {
	for _, t := range b.pipes {
		t.flushHeld()
	}
	clear(b.pipes)
	b.pipes = b.pipes[:0]
}

// held is what a pipe holds of batches: lines to write in one go, and
// whom to tell if that write fails.
type held struct {
	mu     sync.Mutex
	lines  []byte
	failed []func(error)
	// reader is set while the pipe's reader delivers what it read: a
	// request sent meanwhile (most often the call that a delivered answer
	// let out of the maxConcurrent line) is held and written with the
	// others at the reader's flush, not with a write of its own.
	reader bool
}

// holdForReader adds line to what the reader writes at its flush, and
// reports false, holding nothing, when the reader is not delivering.
func (t *pipeTransport) holdForReader(line []byte, failed func(error)) bool {
	t.held.mu.Lock()
	defer t.held.mu.Unlock()
	if !t.held.reader {
		return false
	}
	t.held.lines = append(t.held.lines, line...)
	t.held.failed = append(t.held.failed, failed)
	return true
}

// readerDelivers marks the reader as delivering (see held.reader).
func (t *pipeTransport) readerDelivers() {
	t.held.mu.Lock()
	t.held.reader = true
	t.held.mu.Unlock()
}

// readerFlush ends the reader's delivering and writes what was held
// meanwhile. A line held after this is some batch's, which flushes it.
func (t *pipeTransport) readerFlush() {
	t.held.mu.Lock()
	t.held.reader = false
	t.held.mu.Unlock()
	t.flushHeld()
}

// hold adds line to what t writes at b's flush.
func (t *pipeTransport) hold(b *Batch, line []byte, failed func(error)) {
	t.held.mu.Lock()
	first := len(t.held.failed) == 0
	t.held.lines = append(t.held.lines, line...)
	t.held.failed = append(t.held.failed, failed)
	t.held.mu.Unlock()
	if first {
		b.pipes = append(b.pipes, t)
	}
}

// flushHeld writes the lines held for a batch. The write is bounded by
// the transport's life rather than by one call's context: it carries
// several calls, and each of them ends on its own context anyway.
//
// The buffers are kept for the next batch when the write was done here,
// as it nearly always is: growing them afresh for every batch was most
// of the allocation under many concurrent calls (BenchmarkCallConcurrent).
func (t *pipeTransport) flushHeld() {
	t.held.mu.Lock()
	lines, failed := t.held.lines, t.held.failed
	if len(failed) == 0 {
		t.held.mu.Unlock()
		return // the buffers stay for the next batch
	}
	t.held.lines, t.held.failed = nil, nil
	t.held.mu.Unlock()
	settled := t.post(context.Background(), lines, func(err error) {
		for _, f := range failed {
			f(err)
		}
	})
	if !settled || cap(lines) > maxKeptBatch {
		return // a goroutine writes them still, or they are too big to keep
	}
	clear(failed)
	t.held.mu.Lock()
	if t.held.lines == nil && t.held.failed == nil {
		t.held.lines, t.held.failed = lines[:0], failed[:0]
	}
	t.held.mu.Unlock()
}

// maxKeptBatch bounds the buffer a pipe keeps between batches: one that
// carried a huge request is let go.
const maxKeptBatch = 64 << 10

// A Flusher writes out what it has held back. Given as
// [CallOptions].Flusher, the done function of [Client.Send] may hold its
// output (an answer to a client) rather than write it, and f.Flush is
// always called after done: at once, or, when done ran on the
// connection's reader, once that reader has delivered everything it has
// read. Answers that arrive together thus leave in one write. Flush must
// not block.
type Flusher interface {
	Flush()
}
