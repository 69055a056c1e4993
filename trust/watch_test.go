package trust

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestWatchBeginsWithAChange: a store watching for approvals holds no
// watch while nothing waits for one; once a review finds a change the
// watch begins, and another process's approval calls changed.
func TestWatchBeginsWithAChange(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Review("fx", ModePin, raws(echo), nil, nil)
	s.Flush()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan struct{}, 1)
	before := runtime.NumGoroutine()
	if err := s.Watch(ctx, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	s.Review("fx", ModePin, raws(echoKeys), nil, nil) // the same definitions
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines with nothing pending, %d before the watch", n, before)
	}
	if r := s.Review("fx", ModePin, raws(echoNew), nil, nil); r.WithheldCount() != 1 {
		t.Fatalf("withheld %d, want 1", r.WithheldCount())
	}
	// Another process approves; the watch may still be starting, and
	// reads the file once it has.
	other, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Approve(other.Review("fx", ModePin, raws(echoNew), nil, nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("an approval by another process was not seen")
	}
	if r := s.Review("fx", ModePin, raws(echoNew), nil, nil); r.WithheldCount() != 0 {
		t.Errorf("after the approval: withheld %d", r.WithheldCount())
	}
}
