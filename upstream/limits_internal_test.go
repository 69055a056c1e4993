package upstream

import (
	"context"
	"sync"
	"testing"
)

// TestFIFOOrder: waiters get slots in the order they came, and one whose
// context ends leaves the line without taking a slot.
func TestFIFOOrder(t *testing.T) {
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
		for {
			f.mu.Lock()
			n := f.waiters.Len()
			f.mu.Unlock()
			if n == i+1 {
				break
			}
		}
	}
	leave()
	for {
		f.mu.Lock()
		n := f.waiters.Len()
		f.mu.Unlock()
		if n == 4 {
			break
		}
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
