package stdio

import (
	"context"
	"sync"

	"github.com/mcpx/mcpx/callopt"
)

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
func (t *Transport) holdForReader(line []byte, failed func(error)) bool {
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
func (t *Transport) readerDelivers() {
	t.held.mu.Lock()
	t.held.reader = true
	t.held.mu.Unlock()
}

// readerFlush ends the reader's delivering and writes what was held
// meanwhile. A line held after this is some batch's, which flushes it.
func (t *Transport) readerFlush() {
	t.held.mu.Lock()
	t.held.reader = false
	t.held.mu.Unlock()
	t.FlushHeld()
}

// hold adds line to what t writes at b's flush.
func (t *Transport) hold(b *callopt.Batch, line []byte, failed func(error)) {
	t.held.mu.Lock()
	first := len(t.held.failed) == 0
	t.held.lines = append(t.held.lines, line...)
	t.held.failed = append(t.held.failed, failed)
	t.held.mu.Unlock()
	if first {
		b.Hold(t)
	}
}

// FlushHeld writes the lines held for a batch. The write is bounded by
// the transport's life rather than by one call's context: it carries
// several calls, and each of them ends on its own context anyway.
//
// The buffers are kept for the next batch when the write was done here,
// as it nearly always is: growing them afresh for every batch was most
// of the allocation under many concurrent calls (BenchmarkCallConcurrent).
func (t *Transport) FlushHeld() {
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
