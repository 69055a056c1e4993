package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultMaxBytes is the size at which the trail rotates when
// Options.MaxBytes is zero.
const DefaultMaxBytes = 10 << 20

// Files is how many files the trail keeps: audit.jsonl and, once it has
// rotated, audit.jsonl.1 up to audit.jsonl.<Files-1>, oldest last.
const Files = 3

// defaultQueue is how many lines may wait for the writer before Record
// drops them. The queue takes memory only for the calls waiting.
const defaultQueue = 4096

// Arguments says how much of a call's arguments a line keeps. Their size
// and hash are always kept.
type Arguments string

const (
	// ArgumentsNone keeps no names or values (the default).
	ArgumentsNone Arguments = "none"
	// ArgumentsKeys keeps the arguments' names.
	ArgumentsKeys Arguments = "keys"
	// ArgumentsFull keeps the arguments as the client sent them.
	ArgumentsFull Arguments = "full"
)

// Options configure a Recorder. A nil *Options means the defaults, which
// need a Path.
type Options struct {
	// Path is the trail's file; its directory is made when needed.
	Path string
	// MaxBytes is the size past which the file rotates; zero means
	// DefaultMaxBytes.
	MaxBytes int64
	// Arguments is what a line keeps of the arguments; "" means
	// ArgumentsNone.
	Arguments Arguments
	// Queue is how many lines may wait for the writer; zero means 4096.
	Queue int
	// Interval is how long after the first call queued since the last
	// write the queued lines are written; zero means 100ms. Close writes
	// what is queued at once.
	Interval time.Duration
	// Logger hears, once each, that lines were dropped or that the file
	// could not be written. Nil discards.
	Logger *slog.Logger
}

// Recorder appends the audit lines. Record is safe for concurrent use and
// never blocks; Close waits for the lines queued before it to be written.
//
// An idle Recorder holds no goroutine, timer tick or queue memory: the
// queue grows with the calls waiting (up to Options.Queue), and the first
// call after a write arms one timer that writes them Interval later.
type Recorder struct {
	opts Options

	mu      sync.Mutex
	pending []Call      // waiting for the next write, at most opts.Queue
	timer   *time.Timer // writes pending Interval after the first of them; nil before the first call
	closed  bool

	writeMu sync.Mutex // one write at a time, in the order of the calls; guards what follows
	f       *file
	batch   []byte // the last write's lines, reused
	spare   []Call // the last write's calls, reused as the next pending

	close  sync.Once
	full   sync.Once // logs the first line dropped for a full queue
	failed sync.Once // logs the first write that failed
}

// New makes a Recorder. It opens nothing yet, and starts nothing: a
// trail that cannot be written costs a logged line, never a failed
// command, and a trail with no call to write costs no memory or wake-up.
func New(opts *Options) (*Recorder, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Path == "" {
		return nil, errors.New("audit: no path for the trail")
	}
	if o.MaxBytes < 0 {
		return nil, fmt.Errorf("audit: maxBytes %d is negative", o.MaxBytes)
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	switch o.Arguments {
	case "":
		o.Arguments = ArgumentsNone
	case ArgumentsNone, ArgumentsKeys, ArgumentsFull:
	default:
		return nil, fmt.Errorf("audit: arguments %q: want none, keys or full", o.Arguments)
	}
	if o.Queue <= 0 {
		o.Queue = defaultQueue
	}
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Recorder{opts: o, f: &file{path: o.Path, max: o.MaxBytes}}, nil
}

// Record queues one call's line. It does not block: with the queue full
// the line is dropped. The call's Params and Result must not change
// afterwards (the writer reads them later); a large Result is read at
// once, for what the line says of it, and not held for the writer, so
// that an answer of many megabytes is not kept in memory by its line.
//
// The line is written Interval after the first call queued since the
// last write, with every call queued meanwhile: one wake-up per batch,
// not per call (waking a goroutine for each call cost more CPU than the
// call's own work in mcpx), and none while nothing is called.
func (r *Recorder) Record(c Call) {
	if r == nil {
		return
	}
	if c.End.IsZero() {
		c.End = time.Now()
	}
	if len(c.Result) > keptResult {
		c.Outcome, c.resultBytes, c.Result = c.outcome(), len(c.Result), nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	if len(r.pending) >= r.opts.Queue {
		r.mu.Unlock()
		r.full.Do(func() {
			r.opts.Logger.Warn("audit trail queue is full: dropping lines", "file", r.opts.Path)
		})
		return
	}
	r.pending = append(r.pending, c)
	if len(r.pending) == 1 {
		if r.timer == nil {
			r.timer = time.AfterFunc(r.opts.Interval, r.write)
		} else {
			r.timer.Reset(r.opts.Interval)
		}
	}
	r.mu.Unlock()
}

// Close writes what is queued and stops the Recorder. It is idempotent.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.close.Do(func() {
		r.mu.Lock()
		r.closed = true
		if r.timer != nil {
			r.timer.Stop()
		}
		r.mu.Unlock()
		r.write()
		r.writeMu.Lock()
		r.f.close()
		r.f = nil // a timer's write that was already running writes nothing more
		r.writeMu.Unlock()
	})
	return nil
}

// write turns the queued calls into lines and appends them, at most a
// file's worth at once.
func (r *Recorder) write() {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	calls := r.pending
	r.pending = r.spare[:0]
	r.mu.Unlock()
	if r.f == nil || len(calls) == 0 {
		r.spare = calls[:0]
		return
	}
	batch := r.batch[:0]
	for _, c := range calls {
		n := len(batch)
		batch = r.line(batch, c)
		if int64(len(batch)) > min(r.opts.MaxBytes, maxBatch) && n > 0 {
			// More than a file holds: what came before goes first.
			r.append(r.f, batch[:n])
			batch = append(batch[:0], batch[n:]...)
		}
	}
	r.append(r.f, batch)
	clear(calls) // the params and results are the callers' memory: let it go
	r.spare, r.batch = nil, nil
	if cap(calls) <= maxSpare {
		r.spare = calls[:0]
	}
	if cap(batch) <= maxBatch {
		r.batch = batch[:0]
	}
}

// maxSpare bounds the queue kept for reuse after a burst of calls.
const maxSpare = 256

// maxBatch bounds the lines written at once.
const maxBatch = 64 << 10

// line appends c's line to b.
func (r *Recorder) line(b []byte, c Call) []byte {
	j, err := json.Marshal(c.line(r.opts.Arguments))
	if err != nil { // a Line always marshals; keep the trail whole regardless
		return b
	}
	return append(append(b, j...), '\n')
}

func (r *Recorder) append(f *file, lines []byte) {
	if len(lines) == 0 {
		return
	}
	if err := f.append(lines); err != nil {
		r.failed.Do(func() {
			r.opts.Logger.Warn("audit trail not written: dropping lines", "file", r.opts.Path, "err", err)
		})
	}
}

// file is the trail's file as the writer holds it open.
type file struct {
	path string
	max  int64
	f    *os.File
	size int64 // the file's size as last read, plus what this writer added
}

// append writes lines, rotating first when they would take the file past
// max. Another mcpx (a `mcpx call` beside `serve`) appends to the same
// file, so the size is read from the file again before a rotation.
func (f *file) append(lines []byte) error {
	if f.f == nil {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			return err
		}
		h, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		f.f, f.size = h, 0
		if st, err := h.Stat(); err == nil {
			f.size = st.Size()
		}
	}
	if f.size > 0 && f.size+int64(len(lines)) > f.max {
		if st, err := f.f.Stat(); err == nil {
			f.size = st.Size()
		}
		if f.size > 0 && f.size+int64(len(lines)) > f.max {
			if err := f.rotate(); err != nil {
				return err
			}
			return f.append(lines)
		}
	}
	n, err := f.f.Write(lines)
	f.size += int64(n)
	return err
}

// rotate shifts audit.jsonl to .1, .1 to .2 and so on, dropping the
// oldest, so the trail never takes more than Files*max bytes.
func (f *file) rotate() error {
	f.close()
	for i := Files - 1; i > 0; i-- {
		from := f.path
		if i > 1 {
			from = fmt.Sprintf("%s.%d", f.path, i-1)
		}
		if err := os.Rename(from, fmt.Sprintf("%s.%d", f.path, i)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotate %s: %w", from, err)
		}
	}
	return nil
}

func (f *file) close() {
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
}
