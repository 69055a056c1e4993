package trust

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/mcpx/mcpx/internal/statedir"

	"github.com/gofrs/flock"
)

// FileName is the pin file's name in the state directory.
const FileName = "pins.json"

// fileVersion is the pin file's format; a file of another is refused.
const fileVersion = 1

// Record is one approved definition: its pinned members as canonical
// JSON, kept whole in the file so that a later change can be shown
// against it. A Store holds only the fingerprints of what it read from
// the file (at 10,000 tools the definitions were 6 MB of its heap) and
// reads a definition again when a change needs it: a Record from
// [Store.Pinned] has no Definition.
type Record struct {
	SHA256     string          `json:"sha256"`
	Definition json.RawMessage `json:"definition"`
}

// Pins are one server's approved tools and prompts, by the server's own
// names.
type Pins struct {
	Approved time.Time         `json:"approved"`
	Tools    map[string]Record `json:"tools"`
	Prompts  map[string]Record `json:"prompts"`
}

func (p *Pins) of(kind Kind) map[string]Record {
	if kind == Prompt {
		return p.Prompts
	}
	return p.Tools
}

type pinFile struct {
	Version int              `json:"version"`
	Servers map[string]*Pins `json:"servers"`
}

// Options configure [Open]. A nil *Options means the defaults.
type Options struct {
	// Logger receives what the store cannot do; nil discards.
	Logger *slog.Logger
	// Quiet is how long the first uses [Store.Review] records wait for
	// another before they are written, all in one write; zero means
	// 250ms.
	Quiet time.Duration
	// MaxDelay bounds how long a first use waits for its write while
	// others keep coming; zero means 2s.
	MaxDelay time.Duration
	// OnWrite, when set, is called after each write of the pin file (a
	// test counts them with it); nil: nothing.
	OnWrite func()
	// Background has Open return before the file is read: it is read on
	// a goroutine, and every method that needs the pins waits for it.
	// serve uses it so that initialize is answered while a large file
	// (8 MB at 10,000 tools, 160-200 ms to decode) is read. A file that
	// is not a pin file then fails the store, which [Store.Loaded]
	// reports: until the process stops, every definition reviewed is
	// new (withheld in mode pin) and nothing is written over the file.
	Background bool
}

// Default delays of the first uses' write.
const (
	defaultQuiet    = 250 * time.Millisecond
	defaultMaxDelay = 2 * time.Second
)

// Store is the pin file of one state directory. Its methods are safe for
// concurrent use, and several processes may use the same file.
//
// A server's first definitions (trust on first use) are recorded in
// memory at once and written with the others that come within
// Options.Quiet, in one write, at most Options.MaxDelay later: a start of
// a thousand new servers writes the file a few times, not a thousand. An
// approval ([Store.Approve]) is written, with whatever waits, before it
// returns; [Store.Close] writes what waits. A process that dies before
// the write loses only first uses, which its next start records again.
type Store struct {
	path string
	log  *slog.Logger
	opts Options

	mu sync.Mutex
	// pins are the file's pins as last read or written, whose entries are
	// never changed in place (an update makes new ones).
	pins map[string]*Pins
	// mark is the SHA-256 of the file as last read or written (zero: no
	// file), to tell another process's write from this store's own.
	mark [sha256.Size]byte
	// pending are the first uses not written yet, by server.
	pending map[string]*firstUse
	queued  int         // first uses recorded since the last write began
	since   time.Time   // when the first of those was recorded
	lastAt  time.Time   // and the last
	timer   *time.Timer // writes pending; nil before the first
	closed  bool
	held    int    // Holds not released: first uses wait
	changed func() // Watch's: a write found another process's pins
	// watchCtx is Watch's; watching says its watch began, which waits
	// for a review to find a change (pendingChanges).
	watchCtx       context.Context
	watching       bool
	pendingChanges bool
	// unwritable is the error of the last write that failed; it is logged
	// once, and first uses are not recorded while it lasts.
	unwritable error
	// canon caches, by the SHA-256 of a definition's bytes, the
	// fingerprint of its pinned members: Review runs at every catalog
	// rebuild. The canonical text itself is made again when needed (a
	// change to show, an approval, a first use written).
	canon map[Kind]map[[sha256.Size]byte]canonSum
	// last keeps each server's last review with what it was made of, for
	// a rebuild in which the server's lists are the same slices (another
	// server changed); gen counts the reloads of the file, which make
	// every one stale.
	gen  uint64
	last map[string]lastReview

	writeMu sync.Mutex // one write of the file at a time in this process

	// defs is the file's pins with their definitions, read when a
	// change is shown against them (see definitionLocked) and dropped at
	// the next read or write of the file, or defsKeep after the read.
	defs      map[string]*Pins
	defsTimer *time.Timer

	// loaded is closed once the file has been read (nil: Open read it);
	// loadErr is what that read found wrong, set before.
	loaded  chan struct{}
	loadErr error
}

// firstUse is a server's first definitions, as listed, waiting to be
// written; rec is their record once made (by the write, or by a review
// of other lists before it).
type firstUse struct {
	tools, prompts []json.RawMessage
	seen           time.Time
	rec            *Pins
	// names is how many tool names the catalog knew when these were
	// scanned (see Store.namesGrewLocked); writing says a write took
	// them, so they stay as they are.
	names   int
	writing bool
}

type lastReview struct {
	tools, prompts *json.RawMessage
	nt, np         int
	mode           Mode
	gen            uint64
	r              *Review
}

type canonSum struct {
	name string
	sum  string
	err  error
}

// maxCanon bounds the cache of fingerprints of each kind: past it, the
// cache starts again. Above the tools of a large catalog, so that a
// rebuild does not start it again each time.
const maxCanon = 1 << 16

// DefaultDir is $XDG_STATE_HOME/mcpx, where $XDG_STATE_HOME defaults to
// ~/.local/state; "" when neither is known.
func DefaultDir() string { return statedir.Dir() }

// Open reads the pin file in dir, if there is one; a missing file (or
// directory) is an empty record. A file that is not a pin file is an
// error naming it: guessing would either trust everything again or
// withhold everything.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Quiet <= 0 {
		o.Quiet = defaultQuiet
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = defaultMaxDelay
	}
	s := &Store{path: filepath.Join(dir, FileName), log: o.Logger, opts: o, pins: map[string]*Pins{},
		pending: map[string]*firstUse{}, canon: map[Kind]map[[sha256.Size]byte]canonSum{}, last: map[string]lastReview{}}
	if o.Background {
		s.loaded = make(chan struct{})
		go func() {
			defer close(s.loaded)
			_, s.loadErr = s.reload()
		}()
		return s, nil
	}
	if _, err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Loaded waits for the pin file's read (see Options.Background) and
// returns what it found wrong; nil at once for a store Open read.
func (s *Store) Loaded(ctx context.Context) error {
	if s.loaded == nil {
		return nil
	}
	select {
	case <-s.loaded:
		return s.loadErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait waits for the pin file's read; a local file's, so not bounded by
// a context.
func (s *Store) wait() error {
	if s.loaded != nil {
		<-s.loaded
	}
	return s.loadErr
}

// Path is the pin file's path.
func (s *Store) Path() string { return s.path }

// readFile reads the pin file's bytes; a missing one is nil.
func (s *Store) readFile() ([]byte, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// No file yet; or the state directory is not one, which the
		// first write reports (see Review).
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the trust pins: %w", err)
	}
	return data, nil
}

// leanFile is a pin file read for its fingerprints only.
type leanFile struct {
	Version int                  `json:"version"`
	Servers map[string]*leanPins `json:"servers"`
}

type leanPins struct {
	Approved time.Time             `json:"approved"`
	Tools    map[string]leanRecord `json:"tools"`
	Prompts  map[string]leanRecord `json:"prompts"`
}

type leanRecord struct {
	SHA256 string `json:"sha256"`
}

// decodeLean decodes the pin file's bytes without the definitions, as
// the store holds them; nil is an empty record.
func (s *Store) decodeLean(data []byte) (map[string]*Pins, error) {
	if data == nil {
		return map[string]*Pins{}, nil
	}
	var f leanFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, s.notPinFile(err)
	}
	if f.Version != fileVersion {
		return nil, s.otherVersion(f.Version)
	}
	records := func(lean map[string]leanRecord) map[string]Record {
		out := make(map[string]Record, len(lean))
		for name, r := range lean {
			out[name] = Record{SHA256: r.SHA256}
		}
		return out
	}
	out := make(map[string]*Pins, len(f.Servers))
	for server, lp := range f.Servers {
		if lp == nil {
			lp = &leanPins{}
		}
		out[server] = &Pins{Approved: lp.Approved, Tools: records(lp.Tools), Prompts: records(lp.Prompts)}
	}
	return out, nil
}

func (s *Store) notPinFile(err error) error {
	return fmt.Errorf("%s is not a pin file (%v): fix it, or remove it to trust every server's current tools again", s.path, err)
}

func (s *Store) otherVersion(v int) error {
	return fmt.Errorf("%s has version %d; this mcpx reads version %d", s.path, v, fileVersion)
}

// decode decodes the pin file's bytes whole, definitions included, as an
// update rewrites them; nil is an empty record.
func (s *Store) decode(data []byte) (map[string]*Pins, error) {
	if data == nil {
		return map[string]*Pins{}, nil
	}
	var f pinFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, s.notPinFile(err)
	}
	if f.Version != fileVersion {
		return nil, s.otherVersion(f.Version)
	}
	if f.Servers == nil {
		f.Servers = map[string]*Pins{}
	}
	var b bytes.Buffer
	for _, p := range f.Servers {
		if p.Tools == nil {
			p.Tools = map[string]Record{}
		}
		if p.Prompts == nil {
			p.Prompts = map[string]Record{}
		}
		// The file is indented for people; diffs compare the canonical,
		// compact text.
		for _, recs := range []map[string]Record{p.Tools, p.Prompts} {
			for name, rec := range recs {
				b.Reset()
				if json.Compact(&b, rec.Definition) == nil && b.Len() < len(rec.Definition) {
					rec.Definition = bytes.Clone(b.Bytes())
					recs[name] = rec
				}
			}
		}
	}
	return f.Servers, nil
}

// mark is the mark of a file's bytes: zero for no file.
func markOf(data []byte) [sha256.Size]byte {
	if data == nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(data)
}

// Reload reads the pin file again and reports whether it changed since
// last read or written (another process approved something).
func (s *Store) Reload() (bool, error) {
	if err := s.wait(); err != nil {
		return false, err
	}
	return s.reload()
}

func (s *Store) reload() (bool, error) {
	data, err := s.readFile()
	if err != nil {
		return false, err
	}
	mark := markOf(data)
	s.mu.Lock()
	same := mark == s.mark && s.gen > 0
	s.mu.Unlock()
	if same {
		return false, nil // this store's own write, most often: nothing to decode
	}
	pins, err := s.decodeLean(data)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := mark != s.mark
	s.pins, s.mark, s.defs = pins, mark, nil
	for server := range pins {
		// Another process recorded the server first: its record wins.
		delete(s.pending, server)
	}
	s.gen++
	return changed, nil
}

// update changes the pin file under its lock: it starts from what the
// file holds now (this store's pins, unless another process wrote since),
// lets change edit a copy of that, adds the first uses that wait, and
// writes the result atomically, once. The store then holds what was
// written. It reports whether the file held another process's writes.
func (s *Store) update(change func(pins map[string]*Pins)) (external bool, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return false, fmt.Errorf("record trust pins: %w", err)
	}
	lock := flock.New(s.path + ".lock")
	if err := lock.Lock(); err != nil {
		return false, fmt.Errorf("record trust pins: lock: %w", err)
	}
	defer lock.Unlock()
	data, err := s.readFile()
	if err != nil {
		return false, err
	}
	mark := markOf(data)
	s.mu.Lock()
	ours := mark == s.mark
	batch := maps.Clone(s.pending)
	for _, fu := range batch {
		fu.writing = true // as it is now: no rescan changes it
	}
	s.queued = 0 // what comes from here on waits for a write of its own
	s.mu.Unlock()
	if change == nil && len(batch) == 0 {
		return false, nil // written by the write before
	}
	// The file as it is now, definitions and all, which the store does
	// not hold: what is written is it and the change.
	base, err := s.decode(data)
	if err != nil {
		return false, err
	}
	// The first uses' records, made here, off the reviews' lock.
	for _, fu := range batch {
		fu.record(s)
	}
	pins := maps.Clone(base)
	for server, fu := range batch {
		if pins[server] == nil {
			pins[server] = fu.rec
		}
	}
	if change != nil {
		change(pins)
	}
	data, err = json.MarshalIndent(pinFile{Version: fileVersion, Servers: pins}, "", "  ")
	if err != nil {
		return false, fmt.Errorf("record trust pins: %w", err)
	}
	data = append(data, '\n')
	err = writeAtomic(s.path, data)
	// Held from here on: what was written, decoded again without the
	// definitions. Decoded in one go, the records pack as a second
	// start's do: made among the garbage of a first start with 10,000
	// new tools, they kept 8 MB of the heap's spans from ever being
	// given back (BenchmarkLargeStart: 8.6 against 9.2 KiB of RSS per
	// tool).
	var held map[string]*Pins
	if err == nil {
		held, err = s.decodeLean(data)
	}
	s.mu.Lock()
	for server, fu := range batch {
		if s.pending[server] == fu {
			delete(s.pending, server)
		}
	}
	if err != nil {
		s.mu.Unlock()
		return false, fmt.Errorf("record trust pins: %w", err)
	}
	old := s.pins
	s.pins, s.mark, s.defs = held, markOf(data), nil
	if !ours {
		s.gen++
	} else {
		for server, p := range pins {
			if old[server] != p {
				if fu := batch[server]; fu != nil && fu.rec == p {
					continue // written as reviewed: its review stands
				}
				delete(s.last, server)
			}
		}
	}
	s.mu.Unlock()
	if s.opts.OnWrite != nil {
		s.opts.OnWrite()
	}
	return !ours, nil
}

// record makes the first use's record, once, off the reviews' lock.
func (fu *firstUse) record(s *Store) {
	s.mu.Lock()
	done := fu.rec != nil
	s.mu.Unlock()
	if done {
		return
	}
	rec := fu.make()
	s.mu.Lock()
	if fu.rec == nil {
		fu.rec = rec
	}
	s.mu.Unlock()
}

// make is the record of the first use's definitions.
func (fu *firstUse) make() *Pins {
	p := pinsOf(fu.tools, fu.prompts)
	p.Approved = fu.seen.UTC()
	return p
}

// pinsOf records definitions as listed: their canonical text and its
// SHA-256, by name.
func pinsOf(tools, prompts []json.RawMessage) *Pins {
	p := &Pins{Tools: make(map[string]Record, len(tools)), Prompts: make(map[string]Record, len(prompts))}
	for _, l := range []struct {
		kind Kind
		raws []json.RawMessage
	}{{Tool, tools}, {Prompt, prompts}} {
		for _, raw := range l.raws {
			text, sum, err := canonical(l.kind, raw)
			name := nameOf(raw)
			if name == "" || err != nil {
				continue // the catalog reports it, and serves nothing of it
			}
			p.of(l.kind)[name] = Record{SHA256: sum, Definition: text}
		}
	}
	return p
}

// writeAtomic writes data to a temporary file beside path and renames it
// over path, so that a reader sees the old file or the new, never half.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}

// scheduleLocked arms the write of the first uses that wait: Quiet after
// the last of them, at most MaxDelay after the first. s.mu must be held.
func (s *Store) scheduleLocked() {
	now := time.Now()
	if s.queued++; s.queued == 1 {
		s.since = now
	}
	s.lastAt = now
	s.armLocked(now)
}

// armLocked sets the timer for when the first uses queued are due: Quiet
// after the last, at most MaxDelay after the first. s.mu must be held.
func (s *Store) armLocked(now time.Time) {
	d := s.dueLocked(now)
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.writePending)
	} else {
		s.timer.Reset(d)
	}
}

// dueLocked is how long until the queued first uses are due; s.mu must
// be held.
func (s *Store) dueLocked(now time.Time) time.Duration {
	return max(min(s.opts.Quiet-now.Sub(s.lastAt), s.opts.MaxDelay-now.Sub(s.since)), 0)
}

// writePending writes the first uses that wait, once they are due: a
// timer armed while a write was under way may fire before (the write
// took the first uses queued before it), and is then armed again.
func (s *Store) writePending() {
	s.mu.Lock()
	if len(s.pending) == 0 || s.closed || s.held > 0 {
		s.mu.Unlock()
		return
	}
	if now := time.Now(); s.queued > 0 && s.dueLocked(now) > 0 {
		s.armLocked(now)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.flush()
}

// flush writes the first uses that wait; a failure is logged once, and
// their servers are served unpinned for the rest of the run.
func (s *Store) flush() {
	external, err := s.update(nil)
	if err != nil {
		s.mu.Lock()
		first := s.unwritable == nil
		s.unwritable = err
		s.mu.Unlock()
		if first {
			s.log.Warn("cannot record the tools of servers seen for the first time: they are served unpinned for this run; servers pinned before stay pinned",
				"err", err)
		}
		return
	}
	s.mu.Lock()
	changed := s.changed
	s.mu.Unlock()
	if external && changed != nil {
		// Another process's pins came with the file: the reviews made
		// before are stale.
		changed()
	}
}

// Hold keeps the first uses from their write until release is called,
// then writes them when due: while the servers of a start come up, a
// first sight not yet written is scanned again against the tool names
// the servers after it bring (see [Store.Review]), so that a server
// seen first cannot shadow one that is slower to start. Flush and Close
// write regardless. release may be called more than once.
func (s *Store) Hold() (release func()) {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.held++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.held--; s.held == 0 && len(s.pending) > 0 && !s.closed {
				s.armLocked(time.Now())
			}
		})
	}
}

// Flush writes at once the first uses that wait for their write.
func (s *Store) Flush() {
	if s.wait() != nil {
		return
	}
	s.mu.Lock()
	n := len(s.pending)
	s.mu.Unlock()
	if n > 0 {
		s.flush()
	}
}

// Close writes the first uses that wait and stops the store's timer;
// reviews after it record no first use. It is idempotent.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	if err := s.wait(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.defsTimer != nil {
		s.defsTimer.Stop()
		s.defs, s.defsTimer = nil, nil
	}
	n := len(s.pending)
	s.mu.Unlock()
	if n > 0 {
		s.flush()
	}
	s.mu.Lock()
	err := s.unwritable
	if n == 0 {
		err = nil
	}
	s.mu.Unlock()
	return err
}

// Pinned returns a copy of a server's pins; nil when it has none.
func (s *Store) Pinned(server string) *Pins {
	if s.wait() != nil {
		return nil
	}
	s.mu.Lock()
	p := s.pins[server]
	fu := s.pending[server]
	s.mu.Unlock()
	if p == nil && fu != nil {
		fu.record(s)
		p = fu.rec
	}
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// sumLocked is a definition's name and fingerprint through the store's
// cache; s.mu must be held.
func (s *Store) sumLocked(kind Kind, raw json.RawMessage) (name, sum string, err error) {
	key := sha256.Sum256(raw)
	if c, ok := s.canon[kind][key]; ok {
		return c.name, c.sum, c.err
	}
	var c canonSum
	_, c.sum, c.err = canonical(kind, raw)
	c.name = nameOf(raw)
	m := s.canon[kind]
	if m == nil || len(m) >= maxCanon {
		m = map[[sha256.Size]byte]canonSum{}
		s.canon[kind] = m
	}
	m[key] = c
	return c.name, c.sum, c.err
}

// defsKeep is how long the definitions read for a change stay held: a
// rebuild reviews every server in turn, and a batch of changes reads the
// file once.
const defsKeep = 10 * time.Second

// definitionLocked is the approved definition of server's kind and name
// as the file holds it; nil when the file no longer does (another
// process changed it: its reload shows the change again). s.mu must be
// held.
func (s *Store) definitionLocked(server string, kind Kind, name string) json.RawMessage {
	if s.defs == nil {
		data, err := s.readFile()
		if err != nil || markOf(data) != s.mark {
			return nil
		}
		if s.defs, err = s.decode(data); err != nil {
			return nil
		}
		if s.defsTimer != nil {
			s.defsTimer.Stop()
		}
		var t *time.Timer
		t = time.AfterFunc(defsKeep, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.defsTimer == t {
				s.defs, s.defsTimer = nil, nil
			}
		})
		s.defsTimer = t
	}
	p := s.defs[server]
	if p == nil {
		return nil
	}
	return p.of(kind)[name].Definition
}
