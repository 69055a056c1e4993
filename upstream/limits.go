package upstream

import (
	linkedlist "container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The names of the limits, as the config and the errors call them.
const (
	LimitCallTimeout = "callTimeout"
	LimitMaxCallTime = "maxCallTime"
)

// TimeoutError is returned by [Client.Request] when a call ran out of
// time: no answer or progress within the server's callTimeout, or no answer
// within its maxCallTime. The server was sent notifications/cancelled for
// the request.
type TimeoutError struct {
	Server string        // the server's name
	Method string        // e.g. "tools/call"
	Target string        // the tool or prompt name, or the resource URI; "" if none
	Limit  string        // LimitCallTimeout or LimitMaxCallTime
	After  time.Duration // the limit's value
}

func (e *TimeoutError) Error() string {
	what := e.Method
	if e.Target != "" {
		what += fmt.Sprintf(" %q", e.Target)
	}
	if e.Limit == LimitCallTimeout {
		return fmt.Sprintf("server %q: %s timed out: no answer or progress within callTimeout %s", e.Server, what, e.After)
	}
	return fmt.Sprintf("server %q: %s timed out: no answer within maxCallTime %s", e.Server, what, e.After)
}

// Is makes a TimeoutError match context.DeadlineExceeded, which is what
// the call's context reports.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

type keepAliveKey struct{}

// keepAlive returns the function a progress notification for the request
// under ctx calls to restart its callTimeout; nil when there is none.
func keepAlive(ctx context.Context) func() {
	f, _ := ctx.Value(keepAliveKey{}).(func())
	return f
}

// limitCall applies the server's callTimeout and maxCallTime to one
// request: the returned context ends with a *TimeoutError as its cause,
// and carries the keep-alive that progress for the request calls. stop
// releases the timers.
func (c *Client) limitCall(ctx context.Context, method string, params json.RawMessage) (context.Context, func()) {
	l := c.cfg.Limits
	if l.CallTimeout <= 0 && l.MaxCallTime <= 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	expire := func(limit string, after time.Duration) func() {
		return func() {
			cancel(&TimeoutError{Server: c.cfg.Name, Method: method, Target: target(params), Limit: limit, After: after})
		}
	}
	var timers []*time.Timer
	if d := l.MaxCallTime; d > 0 {
		timers = append(timers, time.AfterFunc(d, expire(LimitMaxCallTime, d)))
	}
	if d := l.CallTimeout; d > 0 {
		t := time.AfterFunc(d, expire(LimitCallTimeout, d))
		timers = append(timers, t)
		var mu sync.Mutex
		ctx = context.WithValue(ctx, keepAliveKey{}, func() {
			mu.Lock()
			defer mu.Unlock()
			// A timer that already fired stays fired: the call is over.
			if t.Stop() {
				t.Reset(d)
			}
		})
	}
	return ctx, func() {
		for _, t := range timers {
			t.Stop()
		}
		cancel(nil)
	}
}

// timeoutCause returns the *TimeoutError that ended ctx, or nil.
func timeoutCause(ctx context.Context) *TimeoutError {
	cause := context.Cause(ctx)
	if cause == nil {
		return nil // the usual case, asked on every call: no allocation
	}
	var te *TimeoutError
	if errors.As(cause, &te) {
		return te
	}
	return nil
}

// target names what a request is about, for a timeout message.
func target(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Name != "" {
		return p.Name
	}
	return p.URI
}

// fifo is a counting semaphore whose waiters are served in arrival order,
// so that under maxConcurrent no call is overtaken by later ones. A nil
// *fifo never waits.
type fifo struct {
	mu      sync.Mutex
	free    int
	waiters linkedlist.List // of *waiter
}

// waiter is one call in line for a slot.
type waiter struct {
	run  func() // called, outside mu, with the slot handed over
	done bool   // handed a slot or withdrawn; guarded by mu
}

func newFIFO(n int) *fifo {
	if n <= 0 {
		return nil
	}
	return &fifo{free: n}
}

// enqueue takes a slot now, reporting true, when one is free and nobody
// waits; otherwise it puts run in line, to be called with a slot when one
// is released. withdraw takes run out of the line and reports whether it
// did; false means run has been handed the slot.
func (f *fifo) enqueue(run func()) (now bool, withdraw func() bool) {
	if f == nil {
		return true, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.free > 0 && f.waiters.Len() == 0 {
		f.free--
		return true, nil
	}
	w := &waiter{run: run}
	e := f.waiters.PushBack(w)
	return false, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if w.done {
			return false
		}
		w.done = true
		f.waiters.Remove(e)
		return true
	}
}

// acquire takes a slot, waiting in line until one is free or ctx ends.
func (f *fifo) acquire(ctx context.Context) error {
	ready := make(chan struct{})
	now, withdraw := f.enqueue(func() { close(ready) })
	if now {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		if !withdraw() {
			// Handed a slot just as ctx ended: pass it on.
			<-ready
			f.release()
		}
		return context.Cause(ctx)
	}
}

// release gives a slot back, to the first waiter if there is one.
func (f *fifo) release() {
	if f == nil {
		return
	}
	f.mu.Lock()
	e := f.waiters.Front()
	if e == nil {
		f.free++
		f.mu.Unlock()
		return
	}
	w := f.waiters.Remove(e).(*waiter)
	w.done = true
	f.mu.Unlock()
	w.run()
}
