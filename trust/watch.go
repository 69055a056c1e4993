package trust

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// settle is how long a burst of events on the pin file is let pass
// before it is read (a rename makes several).
const settle = 50 * time.Millisecond

// Watch calls changed, on its own goroutine, each time the pin file
// changes on disk to something other than what this store last read or
// wrote: another process (mcpx trust) approved something, or recorded a
// server this store also saw first and wrote after it. The watch ends
// with ctx.
//
// It begins only once a review finds a change (a definition withheld, or
// served with a warning): before that an approval has nothing to show,
// and a store with nothing pending holds no watch, goroutine or buffer
// (a watch's reader keeps a 64 KB buffer on its stack). When it begins
// the file is read again, so that an approval made before is seen. It
// watches the file's directory, which it creates if need be, since the
// file is replaced by a rename at each write; what cannot be watched is
// logged.
func (s *Store) Watch(ctx context.Context, changed func()) error {
	s.mu.Lock()
	s.changed, s.watchCtx = changed, ctx
	start := s.pendingChanges && !s.watching
	s.watching = s.watching || start
	s.mu.Unlock()
	if start {
		return s.watch(ctx, changed)
	}
	return nil
}

// startWatchLocked begins the watch Watch asked for, if it did and it
// has not begun; s.mu must be held. A review found a change.
func (s *Store) startWatchLocked() {
	s.pendingChanges = true
	if s.watching || s.changed == nil {
		return
	}
	s.watching = true
	ctx, changed := s.watchCtx, s.changed
	go func() {
		if err := s.watch(ctx, changed); err != nil {
			s.log.Warn("approvals by mcpx trust are seen only after a restart", "err", err)
			return
		}
		// An approval made before the watch began.
		if ok, err := s.Reload(); err == nil && ok {
			changed()
		}
	}()
}

// watch sets the watch up and runs it on a goroutine until ctx ends.
func (s *Store) watch(ctx context.Context, changed func()) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("watch the trust pins: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch the trust pins: %w", err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return fmt.Errorf("watch the trust pins: %w", err)
	}
	go func() {
		defer w.Close()
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) != FileName {
					continue
				}
				if timer != nil {
					timer.Stop()
				}
				timer = time.NewTimer(settle)
				fire = timer.C
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				s.log.Warn("watching the trust pins", "err", err)
			case <-fire:
				fire = nil
				ok, err := s.Reload()
				if err != nil {
					s.log.Warn("the trust pins changed but cannot be read; keeping the last ones", "err", err)
					continue
				}
				if ok {
					changed()
				}
			}
		}
	}()
	return nil
}
