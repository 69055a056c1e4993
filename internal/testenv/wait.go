package testenv

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// pollInterval is how often [Eventually] checks its condition: short
// beside any deadline a test gives, long enough not to spin.
const pollInterval = 10 * time.Millisecond

// Eventually checks cond until it holds, and fails the test with the
// message format and args say once d has passed without it holding. Use
// it only where no signal says the state changed; prefer waiting on the
// signal. args are evaluated when Eventually is called: to show a state
// as it is at the failure, pass something fmt formats late, such as a
// pointer or a [fmt.Stringer] (a *Buffer).
func Eventually(tb testing.TB, d time.Duration, cond func() bool, format string, args ...any) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: "+format, append([]any{d}, args...)...)
		}
		time.Sleep(pollInterval)
	}
}

// Buffer is a bytes.Buffer safe for concurrent use: a logger's or a
// child process's goroutines write while the test reads. The zero value
// is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
