package testenv

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that records how a helper ended the test.
// Skipf and Fatalf end the goroutine, as the real ones do, so run the
// helper with [recorder.run].
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f in a goroutine of its own, as the testing package runs a
// test, and returns when f returns or ends the test.
func (r *recorder) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func TestEventually(t *testing.T) {
	n := 0
	Eventually(t, time.Minute, func() bool { n++; return n == 3 }, "never")
	if n != 3 {
		t.Errorf("checked %d times, want 3", n)
	}

	r := &recorder{TB: t}
	r.run(func() { Eventually(r, 0, func() bool { return false }, "the %s", "thing") })
	if r.failed != "after 0s: the thing" {
		t.Errorf("failure %q, want %q", r.failed, "after 0s: the thing")
	}
}

func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := len(b.String()); got != 400 {
		t.Errorf("%d bytes, want 400", got)
	}
}
