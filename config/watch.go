package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Changes says which servers a new config added, removed or changed,
// each list sorted by name.
type Changes struct {
	Added, Removed, Changed []string
}

// Empty reports whether no server changed.
func (c Changes) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Changed) == 0 }

// Compare returns how the servers of next differ from those of prev. A
// server is changed when anything in its entry differs.
func Compare(prev, next *Config) Changes {
	var ch Changes
	old := map[string]Server{}
	for _, s := range prev.Servers {
		old[s.Name] = s
	}
	for _, s := range next.Servers {
		o, ok := old[s.Name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, s.Name)
		case !reflect.DeepEqual(o, s):
			ch.Changed = append(ch.Changed, s.Name)
		}
		delete(old, s.Name)
	}
	for name := range old {
		ch.Removed = append(ch.Removed, name)
	}
	slices.Sort(ch.Added)
	slices.Sort(ch.Removed)
	slices.Sort(ch.Changed)
	return ch
}

// WatchOptions configure [Watch]. A nil *WatchOptions means defaults.
type WatchOptions struct {
	// Load is how the config was loaded; a reload loads the same way, from
	// the file the running config came from. Nil means defaults.
	Load *LoadOptions
	// OnReload receives each new config that parsed and differs from the
	// running one, with what changed. It runs on the watcher's goroutine.
	OnReload func(next *Config, ch Changes)
	// OnError receives a reload that failed (the running config is kept).
	OnError func(err error)
	// Adjust, when set, amends each newly loaded config before it is
	// compared with the running one, as the running one was amended when
	// it was first loaded (mcpx marks and guards its own children so),
	// so that the amendment is not taken for a change.
	Adjust func(*Config)
	// Settle is how long the file must be quiet before it is read, so an
	// editor's burst of writes is read once (default 100ms).
	Settle time.Duration
}

// Watcher reloads a config when its file changes, and on [Watcher.Reload].
type Watcher struct {
	opts    WatchOptions
	load    LoadOptions
	current *Config
	data    []byte // the bytes current came from
	kick    chan struct{}
	done    chan struct{}
}

// Watch watches the file current came from (its directory, so that editors
// that save by writing a new file and renaming it over the old one are
// seen) until ctx ends. With no file, [Watcher.Reload] looks for one as
// [Load] does, and the file it finds is watched from then on.
//
// The watch begins on the watcher's goroutine, not the caller's: adding
// it costs the kernel a walk of every entry it has cached for the
// directory, 5 ms on every start of mcpx with its config in a busy /tmp.
// A change made before it began is still seen, by the file's bytes. A
// directory that cannot be watched is reported to OnError (with
// [ErrUnwatched]), and Reload still works.
func Watch(ctx context.Context, current *Config, opts *WatchOptions) (*Watcher, error) {
	w := &Watcher{current: current, kick: make(chan struct{}, 1), done: make(chan struct{})}
	if opts != nil {
		w.opts = *opts
	}
	if w.opts.Load != nil {
		w.load = *w.opts.Load
	}
	if w.opts.Settle <= 0 {
		w.opts.Settle = 100 * time.Millisecond
	}
	if w.opts.OnReload == nil {
		w.opts.OnReload = func(*Config, Changes) {}
	}
	if w.opts.OnError == nil {
		w.opts.OnError = func(error) {}
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, &Error{File: current.File, Msg: "watch: " + err.Error()}
	}
	if current.File != "" {
		w.data, _ = os.ReadFile(current.File)
	}
	go w.loop(ctx, fw)
	return w, nil
}

// Done is closed when the watcher has stopped.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Reload reads the config again now (what SIGHUP does).
func (w *Watcher) Reload() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *Watcher) loop(ctx context.Context, fw *fsnotify.Watcher) {
	defer close(w.done)
	defer fw.Close()
	if w.current.File != "" {
		w.watch(fw, w.current.File)
		w.reload(w.current.File, false) // changed before the watch began
	}
	var settle *time.Timer
	var settled <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-fw.Events:
			if w.current.File == "" || filepath.Base(ev.Name) != filepath.Base(w.current.File) {
				continue
			}
			if settle != nil {
				settle.Stop()
			}
			settle = time.NewTimer(w.opts.Settle)
			settled = settle.C
		case err := <-fw.Errors:
			w.opts.OnError(&Error{File: w.current.File, Msg: "watch: " + err.Error()})
		case <-settled:
			settled = nil
			w.reload(w.current.File, false)
		case <-w.kick:
			if w.current.File == "" {
				w.find(fw)
			} else {
				w.reload(w.current.File, true)
			}
		}
	}
}

// find looks for a config file as Load does when there was none (mcpx
// add may have made one since) and, when there is one, watches it and
// loads it. The watch starts before the file is read, so a change made
// meanwhile is either in the bytes parsed or seen as an event.
func (w *Watcher) find(fw *fsnotify.Watcher) {
	lo := w.load
	found, err := Load(&lo)
	if err != nil {
		w.opts.OnError(err)
		return
	}
	if found.File == "" {
		w.apply(found)
		return
	}
	w.watch(fw, found.File)
	w.reload(found.File, true)
}

// ErrUnwatched is what OnError gets, wrapped, when the config file's
// directory cannot be watched.
var ErrUnwatched = errors.New("changes to it are seen only on a reload (SIGHUP)")

// watch adds file's directory to fw, reporting a failure to OnError.
func (w *Watcher) watch(fw *fsnotify.Watcher, file string) {
	if err := fw.Add(filepath.Dir(file)); err != nil {
		w.opts.OnError(fmt.Errorf("%w: %w", &Error{File: file, Msg: "watch: " + fileProblem(err)}, ErrUnwatched))
	}
}

// reload loads the config from file; a file whose bytes did not change is
// skipped unless forced (a ${VAR} may have changed since).
func (w *Watcher) reload(file string, force bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		// Mid-rename, or deleted: the next event says more.
		if !os.IsNotExist(err) {
			w.opts.OnError(&Error{File: file, Msg: fileProblem(err)})
		}
		return
	}
	if !force && bytes.Equal(data, w.data) {
		return
	}
	lo := w.load
	lo.File = file
	next, err := Parse(file, data, &lo)
	if err != nil {
		w.opts.OnError(err)
		return
	}
	w.data = data
	w.apply(next)
}

func (w *Watcher) apply(next *Config) {
	if w.opts.Adjust != nil {
		w.opts.Adjust(next)
	}
	ch := Compare(w.current, next)
	w.current = next
	w.opts.OnReload(next, ch)
}
