package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
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
// JSON, kept whole so that a later change can be shown against it.
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

// Store is the pin file of one state directory. Its methods are safe for
// concurrent use, and several processes may use the same file.
type Store struct {
	path string
	log  *slog.Logger

	mu   sync.Mutex
	pins map[string]*Pins
	data []byte // the file's bytes as last read or written
	// unwritable is the error of the last write that failed; it is logged
	// once, and first uses are not recorded while it lasts.
	unwritable error
	// canon caches the canonical form of each definition by its bytes:
	// Review runs at every catalog rebuild.
	canon map[Kind]map[string]canonForm
	// gen counts the changes of pins; last keeps each server's last
	// review with what it was made of, for a rebuild in which the server's
	// lists are the same slices (another server changed).
	gen  uint64
	last map[string]lastReview
}

type lastReview struct {
	tools, prompts *json.RawMessage
	nt, np         int
	mode           Mode
	gen            uint64
	r              *Review
}

type canonForm struct {
	text json.RawMessage
	sum  string
	err  error
}

// maxCanon bounds the cache of canonical forms of each kind: past it, the
// cache starts again. Above the tools of a large catalog, so that a
// rebuild does not start it again each time.
const maxCanon = 1 << 16

// DefaultDir is $XDG_STATE_HOME/mcpx, where $XDG_STATE_HOME defaults to
// ~/.local/state; "" when neither is known.
func DefaultDir() string { return statedir.Dir() }

// Open reads the pin file in dir, if there is one; a missing file (or
// directory) is an empty record. A file that is not a pin file is an
// error naming it: guessing would either trust everything again or
// withhold everything. logger receives what the store cannot do (nil
// discards).
func Open(dir string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{path: filepath.Join(dir, FileName), log: logger, pins: map[string]*Pins{}, canon: map[Kind]map[string]canonForm{}, last: map[string]lastReview{}}
	if _, err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the pin file's path.
func (s *Store) Path() string { return s.path }

// read reads and decodes the pin file; a missing one is empty.
func (s *Store) read() (map[string]*Pins, []byte, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// No file yet; or the state directory is not one, which the
		// first write reports (see Review).
		return map[string]*Pins{}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the trust pins: %w", err)
	}
	var f pinFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("%s is not a pin file (%v): fix it, or remove it to trust every server's current tools again", s.path, err)
	}
	if f.Version != fileVersion {
		return nil, nil, fmt.Errorf("%s has version %d; this mcpx reads version %d", s.path, f.Version, fileVersion)
	}
	if f.Servers == nil {
		f.Servers = map[string]*Pins{}
	}
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
				var b bytes.Buffer
				if json.Compact(&b, rec.Definition) == nil {
					rec.Definition = b.Bytes()
					recs[name] = rec
				}
			}
		}
	}
	return f.Servers, data, nil
}

// Reload reads the pin file again and reports whether it changed since
// last read or written (another process approved something).
func (s *Store) Reload() (bool, error) { return s.reload() }

func (s *Store) reload() (bool, error) {
	pins, data, err := s.read()
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Equal(data, s.data) && s.data != nil {
		return false, nil
	}
	changed := !bytes.Equal(data, s.data)
	s.pins, s.data = pins, data
	s.gen++
	return changed, nil
}

// update changes the pin file under its lock: it reads what is there now
// (another process may have written since), lets change edit that, and
// writes the result atomically. The store then holds what was written.
func (s *Store) update(change func(pins map[string]*Pins)) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("record trust pins: %w", err)
	}
	lock := flock.New(s.path + ".lock")
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("record trust pins: lock: %w", err)
	}
	defer lock.Unlock()
	pins, _, err := s.read()
	if err != nil {
		return err
	}
	change(pins)
	data, err := json.MarshalIndent(pinFile{Version: fileVersion, Servers: pins}, "", "  ")
	if err != nil {
		return fmt.Errorf("record trust pins: %w", err)
	}
	data = append(data, '\n')
	if err := writeAtomic(s.path, data); err != nil {
		return fmt.Errorf("record trust pins: %w", err)
	}
	s.mu.Lock()
	s.pins, s.data = pins, data
	s.gen++
	s.mu.Unlock()
	return nil
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

// Pinned returns a copy of a server's pins; nil when it has none.
func (s *Store) Pinned(server string) *Pins {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pins[server]
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// canonicalLocked is the package's canonical through the store's cache;
// s.mu must be held.
func (s *Store) canonicalLocked(kind Kind, raw json.RawMessage) (json.RawMessage, string, error) {
	if c, ok := s.canon[kind][string(raw)]; ok { // no copy of raw for a lookup
		return c.text, c.sum, c.err
	}
	var c canonForm
	c.text, c.sum, c.err = canonical(kind, raw)
	m := s.canon[kind]
	if m == nil || len(m) >= maxCanon {
		m = map[string]canonForm{}
		s.canon[kind] = m
	}
	m[string(raw)] = c
	return c.text, c.sum, c.err
}
