// Package callopt owns what a request carries beside its params on its
// way to an upstream: where its progress goes, whether a modern server's
// input_required passes through, the write batch it may join and who
// flushes its answer. Both sides of mcpx use it (the server core that
// takes a client's request, the upstream client that sends it), and so
// neither depends on the other for it.
package callopt

import "encoding/json"

// Options are what one request carries beside its params, passed to an
// upstream's RequestWith or Send as a value of its own rather than
// in the context: each context value was an allocation per call and a
// lookup chain every later Value walked. A nil *Options, like the
// zero value, asks for none of it.
type Options struct {
	// Progress, when not nil, relays the progress of a request that
	// carries _meta.progressToken: the server sees a token of mcpx's own,
	// unique per request, so two calls can never mix, and each
	// notifications/progress it sends for that token reaches Progress
	// with the caller's token put back. Progress runs on the connection's
	// reader, before the response of the same request is delivered, so
	// progress keeps its place ahead of the result; it must not call the
	// server. Nil: the server's progress is dropped (it still restarts
	// the request's callTimeout).
	Progress func(params json.RawMessage)

	// PassInput returns a modern server's input_required result as it
	// came, for a caller that speaks the modern era itself and answers
	// it by retrying. False: mcpx asks the questions through the
	// upstream Client's OnServerRequest and retries for the caller.
	PassInput bool

	// Batch, for Send only, leaves the request in the batch instead of
	// writing it, for the batch's Flush to write with others (see
	// [Batch]). It is used only while Send sends: a request that
	// waits its turn under maxConcurrent is written by whichever call
	// frees the slot, on its own. Nil: the request is written at once.
	Batch *Batch

	// Flusher, for Send only, is flushed after Send's done function,
	// which may then hold its output rather than write it (see
	// [Flusher]). Nil: done writes what it has itself.
	Flusher Flusher
}

// Batch holds back the requests a serving loop sends while more of its
// client's lines are already read, so that each upstream gets them in one
// write: with many calls in flight a client's read brings many requests,
// and a write(2) per request was most of what mcpx added to a call
// (BenchmarkCallConcurrent). The loop calls Flush before it waits to read
// again, so nothing is held longer than the lines already in its buffer
// take to dispatch.
//
// A Batch belongs to the goroutine of one loop; requests join it through
// [Options].Batch of an upstream's Send, and only while that call sends
// them: a request that waits its turn under maxConcurrent is written by
// whichever call frees the slot, on its own.
type Batch struct {
	held []Holder
}

// A Holder is what holds lines for a batch: an upstream's pipe, which
// writes them in one go at FlushHeld.
type Holder interface {
	FlushHeld()
}

// Hold adds h to what b flushes; the caller adds each Holder once per
// batch, with its first line.
func (b *Batch) Hold(h Holder) { b.held = append(b.held, h) }

// Len reports how many upstreams hold lines for b's Flush.
func (b *Batch) Len() int { return len(b.held) }

// Flush writes what the batch holds, one write per upstream.
func (b *Batch) Flush() {
	for _, h := range b.held {
		h.FlushHeld()
	}
	clear(b.held)
	b.held = b.held[:0]
}

// A Flusher writes out what it has held back. Given as
// [Options].Flusher, the done function of an upstream's Send may hold its
// output (an answer to a client) rather than write it, and f.Flush is
// always called after done: at once, or, when done ran on the
// connection's reader, once that reader has delivered everything it has
// read. Answers that arrive together thus leave in one write. Flush must
// not block.
type Flusher interface {
	Flush()
}
