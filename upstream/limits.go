package upstream

import (
	linkedlist "container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpx/mcpx/config"
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

// callLimits applies a server's callTimeout and maxCallTime with one timer
// for all its calls. A timer per call and per limit cost every call two
// timers in the runtime's heap and, on a process that was idle between
// calls, a wake-up of the thread asleep in the network poller so that it
// would see the new timer: a tenth of a sequential call's CPU.
//
// Every call to a server has the same limits, so deadlines come in the
// order calls start (maxCallTime) or last show life (callTimeout): two
// lists in that order, whose fronts expire first. A new deadline is never
// earlier than one already listed, so the timer is never moved earlier:
// it is set when the lists go from empty and, when it fires, for the
// fronts left.
type callLimits struct {
	server                   string
	callTimeout, maxCallTime time.Duration

	mu    sync.Mutex
	idle  linkedlist.List // *limitedCall, by last life (callTimeout)
	total linkedlist.List // *limitedCall, by start (maxCallTime)
	timer *time.Timer
	armed bool // the timer will fire
}

// limitedCall is one call under its server's limits, and what ends it
// early. It is not a context: a call sent without waiting (Client.Send)
// is ended by its hook, when a limit runs out or its caller cancels it,
// so that neither costs it a context of its own. Those contexts, with
// their registration under the caller's, were about a fifth of such a
// call's CPU under load (BenchmarkCallConcurrent) and a tenth of a
// sequential one's (BenchmarkCallSequential). A call that waits
// (Client.Request) gets a context from limitCall that the hook cancels.
type limitedCall struct {
	limits *callLimits
	method string
	params json.RawMessage // for the error's target, read only then

	// Guarded by limits.mu.
	lastLife, start time.Time
	idleAt, totalAt *linkedlist.Element // nil once off the list
	ended           error               // the limit that ran out (*TimeoutError) or the cancel's cause, once either came
	endHook         func(error)         // ends the call when a limit runs out or it is cancelled
	stopped         bool
}

// limit puts one request under the server's callTimeout and maxCallTime,
// which start now; nil when the server has neither. stop takes it off.
func (c *Client) limit(method string, params json.RawMessage) *limitedCall {
	if c.limits.none() {
		return nil
	}
	return c.limits.start(method, params)
}

// start puts one request under the limits, which may be none: the record
// is then only what cancels the call (see Client.Send).
func (l *callLimits) start(method string, params json.RawMessage) *limitedCall {
	lc := &limitedCall{limits: l, method: method, params: params}
	if !l.none() {
		l.add(lc)
	}
	return lc
}

// limitCall applies the server's callTimeout and maxCallTime to one
// request that waits for its answer: the returned context ends with a
// *TimeoutError as its cause, and lc is what progress for the request
// keeps alive, passed down with it (nil when the server has neither
// limit). stop takes the call off the limits and releases its context.
func (c *Client) limitCall(ctx context.Context, method string, params json.RawMessage) (_ context.Context, lc *limitedCall, stop func()) {
	lc = c.limit(method, params)
	if lc == nil {
		return ctx, nil, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	lc.onEnd(func(err error) { cancel(err) })
	return ctx, lc, func() {
		lc.stop()
		cancel(nil)
	}
}

func newCallLimits(server string, l config.Limits) *callLimits {
	return &callLimits{server: server, callTimeout: max(l.CallTimeout, 0), maxCallTime: max(l.MaxCallTime, 0)}
}

// none reports whether the server has neither limit.
func (l *callLimits) none() bool { return l.callTimeout == 0 && l.maxCallTime == 0 }

func (l *callLimits) add(lc *limitedCall) {
	now := time.Now()
	lc.lastLife, lc.start = now, now
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.callTimeout > 0 {
		lc.idleAt = l.idle.PushBack(lc)
	}
	if l.maxCallTime > 0 {
		lc.totalAt = l.total.PushBack(lc)
	}
	if !l.armed {
		l.arm(now)
	}
}

// onEnd sets what ends the call when a limit runs out (with the
// *TimeoutError) or it is cancelled (with the cause), in place of what was
// set before; when either came already, f runs now. Nil-safe: a call
// without limits never expires.
func (lc *limitedCall) onEnd(f func(error)) {
	if lc == nil {
		return
	}
	l := lc.limits
	l.mu.Lock()
	err := lc.ended
	if err == nil && !lc.stopped {
		lc.endHook = f
	}
	l.mu.Unlock()
	if err != nil {
		f(err)
	}
}

// endedBy returns the limit that ran out or the cancel's cause, or nil.
func (lc *limitedCall) endedBy() error {
	if lc == nil {
		return nil
	}
	lc.limits.mu.Lock()
	defer lc.limits.mu.Unlock()
	return lc.ended
}

// cancel ends the call with cause as a limit running out would: the hook
// runs now, or when it is set. A call that ended or stopped already is
// left as it is.
func (lc *limitedCall) cancel(cause error) {
	l := lc.limits
	l.mu.Lock()
	if lc.ended != nil || lc.stopped {
		l.mu.Unlock()
		return
	}
	l.remove(lc)
	lc.ended = cause
	f := lc.endHook
	lc.endHook = nil
	l.mu.Unlock()
	if f != nil {
		f(cause)
	}
}

// keepAlive restarts the call's callTimeout: progress came for it.
func (lc *limitedCall) keepAlive() {
	l := lc.limits
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.idleAt != nil { // a call that already timed out stays timed out
		lc.lastLife = time.Now()
		l.idle.MoveToBack(lc.idleAt)
	}
}

// stop takes the call off the limits: it ended, and never expires now.
// Nil-safe.
func (lc *limitedCall) stop() {
	if lc == nil {
		return
	}
	l := lc.limits
	l.mu.Lock()
	l.remove(lc)
	lc.stopped = true
	lc.endHook = nil
	l.mu.Unlock()
}

// remove takes lc off both lists; l.mu is held.
func (l *callLimits) remove(lc *limitedCall) {
	if lc.idleAt != nil {
		l.idle.Remove(lc.idleAt)
		lc.idleAt = nil
	}
	if lc.totalAt != nil {
		l.total.Remove(lc.totalAt)
		lc.totalAt = nil
	}
}

// next is when the first listed call runs out of a limit; ok is false
// when no call is listed. l.mu is held.
func (l *callLimits) next() (at time.Time, ok bool) {
	if e := l.idle.Front(); e != nil {
		at, ok = e.Value.(*limitedCall).lastLife.Add(l.callTimeout), true
	}
	if e := l.total.Front(); e != nil {
		if t := e.Value.(*limitedCall).start.Add(l.maxCallTime); !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	return at, ok
}

// arm sets the timer for the next deadline, if any; l.mu is held.
func (l *callLimits) arm(now time.Time) {
	at, ok := l.next()
	l.armed = ok
	if !ok {
		return
	}
	if l.timer == nil {
		l.timer = time.AfterFunc(at.Sub(now), l.expire)
		return
	}
	l.timer.Reset(at.Sub(now))
}

// ranOut is a call whose limit ran out, as expire collects it.
type ranOut struct {
	lc *limitedCall
	te *TimeoutError
}

// expire ends the calls whose limit has run out, and sets the timer for
// the next. The errors are made outside the lock (naming the target reads
// the params), and each call's hook runs outside it too.
func (l *callLimits) expire() {
	now := time.Now()
	l.mu.Lock()
	out := l.takeExpired(&l.idle, now, LimitCallTimeout, l.callTimeout, func(lc *limitedCall) time.Time { return lc.lastLife }, nil)
	out = l.takeExpired(&l.total, now, LimitMaxCallTime, l.maxCallTime, func(lc *limitedCall) time.Time { return lc.start }, out)
	l.arm(now)
	l.mu.Unlock()
	for i := range out {
		out[i].te.Target = target(out[i].lc.params)
	}
	hooks := make([]func(error), len(out))
	l.mu.Lock()
	for i, x := range out {
		if !x.lc.stopped && x.lc.ended == nil {
			x.lc.ended = x.te
			hooks[i] = x.lc.endHook
			x.lc.endHook = nil
		}
	}
	l.mu.Unlock()
	for i, f := range hooks {
		if f != nil {
			f(out[i].te)
		}
	}
}

// takeExpired takes the calls off list from its front while their limit,
// counted from since, has run out by now, and appends them to out; l.mu is
// held.
func (l *callLimits) takeExpired(list *linkedlist.List, now time.Time, limit string, after time.Duration,
	since func(*limitedCall) time.Time, out []ranOut) []ranOut {
	for e := list.Front(); e != nil; e = list.Front() {
		lc := e.Value.(*limitedCall)
		if now.Before(since(lc).Add(after)) {
			break
		}
		l.remove(lc)
		out = append(out, ranOut{lc, &TimeoutError{Server: l.server, Method: lc.method, Limit: limit, After: after}})
	}
	return out
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
	if f.takeFree() {
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

// tryAcquire takes a slot when one is free and nobody waits, and reports
// whether it did. It spares the usual call the closure enqueue takes.
func (f *fifo) tryAcquire() bool {
	if f == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.takeFree()
}

// takeFree takes a free slot when nobody waits for one; f.mu is held.
func (f *fifo) takeFree() bool {
	if f.free > 0 && f.waiters.Len() == 0 {
		f.free--
		return true
	}
	return false
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
