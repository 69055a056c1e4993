package telemetry

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// batcher is a span processor that queues ended spans under a mutex and
// exports them from one goroutine every delay, or sooner once a batch is
// full. The SDK's batch processor hands each span to its goroutine over a
// channel, waking it for every span: two goroutine switches per call,
// which were most of what tracing cost a call (BenchmarkCallTelemetry).
// It reads the SDK's OTEL_BSP_* variables, with the same defaults.
//
// It also ends sampled spans for the recorder ([Telemetry]) off the
// call's path (endLater): setting a span's attributes and status and
// ending it (its snapshot, this processor's OnEnd) were a fifth of what
// tracing cost a call in the served process, spent before the answer was
// written; done here, a batch at a time before each export, the same work
// runs warm and the answer does not wait for it.
type batcher struct {
	exp      sdktrace.SpanExporter
	delay    time.Duration
	timeout  time.Duration
	maxQueue int
	maxBatch int

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	ends    []pendingEnd // spans to end before the next export
	closed  bool         // no more ends are taken: Shutdown has begun
	stopped bool

	exportMu sync.Mutex    // one export at a time
	kick     chan struct{} // a batch is full
	stop     chan struct{}
	done     chan struct{}
}

var _ sdktrace.SpanProcessor = (*batcher)(nil)

// newBatcher starts a batcher exporting to exp.
func newBatcher(exp sdktrace.SpanExporter, getenv func(string) string) *batcher {
	b := &batcher{exp: exp,
		delay:    envMillis(getenv, "OTEL_BSP_SCHEDULE_DELAY", 5*time.Second),
		timeout:  envMillis(getenv, "OTEL_BSP_EXPORT_TIMEOUT", 30*time.Second),
		maxQueue: envInt(getenv, "OTEL_BSP_MAX_QUEUE_SIZE", 2048),
		maxBatch: envInt(getenv, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
		kick:     make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	b.maxBatch = min(b.maxBatch, b.maxQueue)
	go b.loop()
	return b
}

func envMillis(getenv func(string) string, key string, def time.Duration) time.Duration {
	if n, err := strconv.Atoi(getenv(key)); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return def
}

func envInt(getenv func(string) string, key string, def int) int {
	if n, err := strconv.Atoi(getenv(key)); err == nil && n > 0 {
		return n
	}
	return def
}

func (b *batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span; past maxQueue it is dropped, so that a
// collector that cannot keep up never holds a call back or grows memory.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.stopped || len(b.queue) >= b.maxQueue {
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, s)
	full := len(b.queue) == b.maxBatch
	b.mu.Unlock()
	if full {
		b.wake()
	}
}

// pendingEnd is a sampled span's end as the recorder saw it: what end
// sets on it, and when it ended.
type pendingEnd struct {
	span    trace.Span
	attrs   []attribute.KeyValue
	outcome Outcome
	code    int
	message string
	at      time.Time
}

// endLater queues e, to be applied before the next export; false, having
// done nothing, when the queue is full or the batcher is shutting down
// (the caller ends the span itself).
func (b *batcher) endLater(e pendingEnd) bool {
	b.mu.Lock()
	if b.closed || len(b.ends) >= b.maxQueue {
		b.mu.Unlock()
		return false
	}
	b.ends = append(b.ends, e)
	full := len(b.ends) == b.maxBatch
	b.mu.Unlock()
	if full {
		b.wake()
	}
	return true
}

// applyEnds ends the spans queued by endLater, which queues them for
// export (OnEnd).
func (b *batcher) applyEnds() {
	b.mu.Lock()
	ends := b.ends
	b.ends = nil
	b.mu.Unlock()
	for i := range ends {
		e := &ends[i]
		end(e.span, e.attrs, e.outcome, e.code, e.message, trace.WithTimestamp(e.at))
		*e = pendingEnd{}
	}
}

// wake has the loop export now, a batch being full.
func (b *batcher) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

func (b *batcher) loop() {
	defer close(b.done)
	t := time.NewTicker(b.delay)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		b.export(ctx) // an error is the exporter's to report (otel.Handle)
		cancel()
	}
}

// export sends what is queued, a batch at a time.
func (b *batcher) export(ctx context.Context) error {
	b.exportMu.Lock()
	defer b.exportMu.Unlock()
	b.applyEnds()
	b.mu.Lock()
	spans := b.queue
	b.queue = nil
	b.mu.Unlock()
	var errs []error
	for len(spans) > 0 {
		n := min(len(spans), b.maxBatch)
		if err := b.exp.ExportSpans(ctx, spans[:n]); err != nil {
			errs = append(errs, err)
		}
		spans = spans[n:]
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// ForceFlush exports what is queued now.
func (b *batcher) ForceFlush(ctx context.Context) error { return b.export(ctx) }

// Shutdown exports what is queued and shuts the exporter down, within
// ctx. Spans that end after it are dropped.
func (b *batcher) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.exportMu.Lock()
	b.applyEnds() // while OnEnd still queues them
	b.exportMu.Unlock()
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	close(b.stop)
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return errors.Join(b.export(ctx), b.exp.Shutdown(ctx))
}
