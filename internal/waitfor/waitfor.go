// Package waitfor bounds a wait: for a channel to close or a WaitGroup to
// finish, at most a given time. mcpx's shutdowns take a fixed number of
// steps of its drain time, and each step waits this way.
package waitfor

import (
	"sync"
	"time"
)

// Closed reports whether done is closed within d.
func Closed(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Group reports whether wg finishes within d. When it does not, the
// goroutine that waits for it stays until it does.
func Group(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return Closed(done, d)
}
