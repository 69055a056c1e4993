package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx/mcpx/config"
)

// TestFIFOOrder: waiters get slots in the order they came, and one whose
// context ends leaves the line without taking a slot.
func TestFIFOOrder(t *testing.T) {
	synctest.Test(t, testFIFOOrder)
}

func testFIFOOrder(t *testing.T) {
	f := newFIFO(1)
	ctx := context.Background()
	if err := f.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 5)
	gone, leave := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range 5 {
		c := ctx
		if i == 2 {
			c = gone
		}
		wg.Go(func() {
			if f.acquire(c) != nil {
				return
			}
			got <- i
			f.release()
		})
		// Wait until it is in line, so that the order is known.
		synctest.Wait()
		if n := f.waiters.Len(); n != i+1 {
			t.Fatalf("%d waiters after %d came, want %d", n, i+1, i+1)
		}
	}
	leave()
	synctest.Wait()
	if n := f.waiters.Len(); n != 4 {
		t.Fatalf("%d waiters after one left, want 4", n)
	}
	f.release()
	for _, want := range []int{0, 1, 3, 4} {
		if i := <-got; i != want {
			t.Fatalf("waiter %d got the slot, want %d", i, want)
		}
	}
	wg.Wait()
	if f.free != 1 || f.waiters.Len() != 0 {
		t.Errorf("free %d, waiters %d after all released; want 1 and 0", f.free, f.waiters.Len())
	}
	if newFIFO(0) != nil {
		t.Error("newFIFO(0) should be nil: no limit")
	}
}

// done waits for ctx to end, failing the test after 10s.
func done(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not end", what)
	}
}

// timedOut returns the limit ctx ran out of, or "" when it ended otherwise.
func timedOut(ctx context.Context) string {
	if te := timeoutCause(ctx); te != nil {
		return te.Limit + " " + te.Target
	}
	return ""
}

// TestCallLimitsOneTimer: the calls of a server share one timer, and still
// each runs out of its own callTimeout, restarted by its progress, or its
// maxCallTime; a call that ended is never timed out, and the timer is set
// again for calls that come after it went idle.
func TestCallLimitsOneTimer(t *testing.T) {
	synctest.Test(t, testCallLimitsOneTimer)
}

func testCallLimitsOneTimer(t *testing.T) {
	c := &Client{limits: newCallLimits("s", config.Limits{CallTimeout: 300 * time.Millisecond})}
	call := func(name string) (context.Context, *limitedCall, func()) {
		return c.limitCall(context.Background(), "tools/call", json.RawMessage(`{"name":"`+name+`"}`))
	}
	a, _, stopA := call("a")
	defer stopA()
	b, lcB, stopB := call("b")
	defer stopB()
	_, _, stopEnded := call("ended")
	cc, _, stopC := call("c")
	defer stopC()
	stopEnded()
	c.limits.mu.Lock()
	listed := c.limits.idle.Len()
	c.limits.mu.Unlock()
	if listed != 3 {
		t.Errorf("%d calls listed after one of four stopped, want 3: stop must take it off", listed)
	}
	// b shows life while a and c run out.
	alive := make(chan struct{})
	go func() {
		for {
			select {
			case <-alive:
				return
			case <-time.After(20 * time.Millisecond):
				lcB.keepAlive()
			}
		}
	}()
	done(t, a, "a")
	done(t, cc, "c")
	if b.Err() != nil {
		t.Errorf("b timed out while it showed life: %v", context.Cause(b))
	}
	close(alive)
	done(t, b, "b")
	for ctx, want := range map[context.Context]string{a: "callTimeout a", b: "callTimeout b", cc: "callTimeout c"} {
		if got := timedOut(ctx); got != want {
			t.Errorf("ended with %q, want %q", got, want)
		}
	}

	// Every call is over: the timer fired with nothing left. A new call
	// sets it again.
	later, _, stopLater := call("later")
	defer stopLater()
	done(t, later, "a call after the timer went idle")
	if got := timedOut(later); got != "callTimeout later" {
		t.Errorf("later ended with %q", got)
	}

	// maxCallTime caps a call whatever its progress.
	c = &Client{limits: newCallLimits("s", config.Limits{CallTimeout: time.Hour, MaxCallTime: 200 * time.Millisecond})}
	capped, lcCapped, stopCapped := call("capped")
	defer stopCapped()
	lcCapped.keepAlive()
	done(t, capped, "capped")
	if got := timedOut(capped); got != "maxCallTime capped" {
		t.Errorf("capped ended with %q", got)
	}
}

// TestLimitedCallHooks: a call sent without waiting has no context of its
// own; its limit running out calls the hook it has then, a hook set after
// that runs at once with the same error, and a stopped call never runs
// one.
func TestLimitedCallHooks(t *testing.T) {
	synctest.Test(t, testLimitedCallHooks)
}

func testLimitedCallHooks(t *testing.T) {
	c := &Client{limits: newCallLimits("s", config.Limits{CallTimeout: 100 * time.Millisecond})}
	fired := make(chan error, 4)
	hook := func(err error) { fired <- err }

	stopped := c.limit("tools/call", json.RawMessage(`{"name":"stopped"}`))
	stopped.onEnd(func(err error) { t.Errorf("a stopped call expired: %v", err) })
	stopped.stop()
	stopped.cancel(context.Canceled) // ended already: nothing runs

	lc := c.limit("tools/call", json.RawMessage(`{"name":"late"}`))
	lc.onEnd(func(error) { t.Error("a replaced hook ran") })
	lc.onEnd(hook)
	var err error
	select {
	case err = <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the call's callTimeout never ran out")
	}
	var te *TimeoutError
	if !errors.As(err, &te) || te.Limit != LimitCallTimeout || te.Target != "late" || lc.endedBy() != err {
		t.Errorf("expired with %v (endedBy %v), want callTimeout of late", err, lc.endedBy())
	}
	lc.cancel(context.Canceled) // ended already: nothing runs
	lc.onEnd(hook)              // as a started call sets its abort after the fact
	select {
	case again := <-fired:
		if again != err {
			t.Errorf("a hook set after expiry got %v, want %v", again, err)
		}
	default:
		t.Error("a hook set after the call expired did not run")
	}
	var none *limitedCall // a server without limits
	none.onEnd(hook)
	none.stop()
	if none.endedBy() != nil {
		t.Error("a call without limits timed out")
	}
}

// TestLimitedCallCancel: cancel ends a call through the same hook as a
// limit, once, takes it off the limits, and works for a server without
// limits too, which is how Client.Send's callers cancel.
func TestLimitedCallCancel(t *testing.T) {
	synctest.Test(t, testLimitedCallCancel)
}

func testLimitedCallCancel(t *testing.T) {
	for _, limits := range []config.Limits{{CallTimeout: 50 * time.Millisecond}, {}} {
		l := newCallLimits("s", limits)
		got := make(chan error, 4)
		lc := l.start("tools/call", nil)
		lc.onEnd(func(err error) { got <- err })
		cause := errors.New("the client cancelled")
		lc.cancel(cause)
		lc.cancel(context.Canceled) // a second cancel changes nothing
		if err := <-got; err != cause {
			t.Errorf("limits %+v: the hook got %v, want the cause", limits, err)
		}
		l.mu.Lock()
		listed := l.idle.Len() + l.total.Len()
		l.mu.Unlock()
		if listed != 0 {
			t.Errorf("limits %+v: a cancelled call is still under the limits", limits)
		}
		early := l.start("tools/call", nil)
		early.cancel(cause) // before the call set its hook: it runs when set
		early.onEnd(func(err error) { got <- err })
		select {
		case err := <-got:
			if err != cause {
				t.Errorf("limits %+v: a hook set after cancel got %v", limits, err)
			}
		default:
			t.Errorf("limits %+v: a hook set after cancel did not run", limits)
		}
		if limits.CallTimeout > 0 {
			time.Sleep(2 * limits.CallTimeout) // past both deadlines: nothing may expire twice
			synctest.Wait()                    // the timer's expire has run, if it was set
			l.expire()
		}
		select {
		case err := <-got:
			t.Errorf("limits %+v: a cancelled call ended again with %v", limits, err)
		default:
		}
	}
}
