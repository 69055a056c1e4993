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
// drops them.
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
	// Interval is how often the writer writes the queued lines; zero
	// means 100ms. Close writes what is queued at once.
	Interval time.Duration
	// Logger hears, once each, that lines were dropped or that the file
	// could not be written. Nil discards.
	Logger *slog.Logger
}

// Recorder appends the audit lines. Record is safe for concurrent use and
// never blocks; Close waits for the lines queued before it to be written.
type Recorder struct {
	opts   Options
	queue  chan Call
	quit   chan struct{}
	done   chan struct{}
	close  sync.Once
	full   sync.Once // logs the first line dropped for a full queue
	failed sync.Once // logs the first write that failed
}

// New starts a Recorder's writer. It opens nothing yet: a trail that cannot
// be written costs a logged line, never a failed command.
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
	r := &Recorder{opts: o, queue: make(chan Call, o.Queue), quit: make(chan struct{}), done: make(chan struct{})}
	go r.write()
	return r, nil
}

// Record queues one call's line. It does not block: with the queue full
// the line is dropped. The call's Params and Result must not change
// afterwards (the writer reads them later); a large Result is read at
// once, for what the line says of it, and not held for the writer, so
// that an answer of many megabytes is not kept in memory by its line.
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
	select {
	case <-r.quit:
		return
	default:
	}
	select {
	case r.queue <- c:
	default:
		r.full.Do(func() {
			r.opts.Logger.Warn("audit trail queue is full: dropping lines", "file", r.opts.Path)
		})
	}
}

// Close writes what is queued and stops the writer. It is idempotent.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.close.Do(func() { close(r.quit) })
	<-r.done
	return nil
}

// write is the writer goroutine: every Interval it turns the queued calls
// into lines and appends them in one write, until Close, then writes what
// is left. It wakes on a ticker rather than per call: waking a goroutine
// for each call cost more CPU than the call's own work in mcpx.
func (r *Recorder) write() {
	defer close(r.done)
	f := &file{path: r.opts.Path, max: r.opts.MaxBytes}
	defer f.close()
	tick := time.NewTicker(r.opts.Interval)
	defer tick.Stop()
	var batch []byte
	for {
		select {
		case <-tick.C:
			batch = r.flush(f, batch[:0])
		case <-r.quit:
			r.flush(f, batch[:0])
			return
		}
	}
}

// flush writes the queued calls' lines, at most a file's worth at once,
// and returns batch for reuse.
func (r *Recorder) flush(f *file, batch []byte) []byte {
	for {
		select {
		case c := <-r.queue:
			n := len(batch)
			batch = r.line(batch, c)
			if int64(len(batch)) > min(r.opts.MaxBytes, maxBatch) && n > 0 {
				// More than a file holds: what came before goes first.
				r.append(f, batch[:n])
				batch = append(batch[:0], batch[n:]...)
			}
		default:
			r.append(f, batch)
			return batch
		}
	}
}

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
