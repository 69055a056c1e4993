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
	var te *TimeoutError
	if errors.As(context.Cause(ctx), &te) {
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
	waiters linkedlist.List // of chan struct{}, closed when the slot is handed over
}

func newFIFO(n int) *fifo {
	if n <= 0 {
		return nil
	}
	return &fifo{free: n}
}

// acquire takes a slot, waiting in line until one is free or ctx ends.
func (f *fifo) acquire(ctx context.Context) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	if f.free > 0 && f.waiters.Len() == 0 {
		f.free--
		f.mu.Unlock()
		return nil
	}
	ready := make(chan struct{})
	e := f.waiters.PushBack(ready)
	f.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
		select {
		case <-ready:
			// Handed a slot just as ctx ended: pass it on.
			f.releaseLocked()
		default:
			f.waiters.Remove(e)
		}
		return context.Cause(ctx)
	}
}

// tryAcquire takes a slot if one is free and nobody waits for one.
func (f *fifo) tryAcquire() bool {
	if f == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.free > 0 && f.waiters.Len() == 0 {
		f.free--
		return true
	}
	return false
}

// release gives a slot back, to the first waiter if there is one.
func (f *fifo) release() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releaseLocked()
}

func (f *fifo) releaseLocked() {
	if e := f.waiters.Front(); e != nil {
		f.waiters.Remove(e)
		close(e.Value.(chan struct{}))
		return
	}
	f.free++
}
