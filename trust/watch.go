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
// server this store also saw first and wrote after it. It watches the
// file's directory, which it creates if need be, since the file is
// replaced by a rename at each write. It returns once the watch is set
// up; the watch ends with ctx.
func (s *Store) Watch(ctx context.Context, changed func()) error {
	s.mu.Lock()
	s.changed = changed
	s.mu.Unlock()
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
