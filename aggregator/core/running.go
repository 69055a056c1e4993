package core

import (
	"context"
	"sync"

	"github.com/mcpx/mcpx/telemetry"
)

// running is a client request being answered, as a cancel from the client
// or the end of the session finds it. A call answered from an upstream's
// reader (fastcall.go) has no context of its own: its stop is the
// upstream's cancel, and it is sent under a context that never ends. A
// context per call, with its registration under the session's and the
// upstream's watch on it, was a tenth of a sequential call's CPU
// (BenchmarkCallSequential). A request that handle answers on a goroutine
// has a context, which its stop cancels.
type running struct {
	mu        sync.Mutex
	cancelled bool
	stop      func(cause error) // ends the work answering it; nil until that starts
	span      telemetry.Request // its span and duration (telemetry.go)
	token     string            // its progressToken, as Session.tokens keeps it; "": none
}

// started sets what ends the request's work; when the request was
// cancelled already, stop runs now.
func (r *running) started(stop func(cause error)) {
	r.mu.Lock()
	if !r.cancelled {
		r.stop = stop
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	stop(context.Canceled)
}

// cancel marks the request as not to be answered and stops its work.
func (r *running) cancel() {
	r.mu.Lock()
	stop := r.stop
	done := r.cancelled
	r.cancelled, r.stop = true, nil
	r.mu.Unlock()
	if !done && stop != nil {
		stop(context.Canceled)
	}
}

// isCancelled reports whether the request was cancelled.
func (r *running) isCancelled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled
}
