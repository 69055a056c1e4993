// Package results keeps tool results that were too big to hand to a client
// whole, so the client can read them back in slices by URI.
package results

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults bound what a Store holds (see [Options]).
const (
	DefaultMaxMemory = 64 << 20
	DefaultMaxDisk   = 1 << 30
	DefaultMaxAge    = time.Hour
)

// URIPrefix starts the URI of every kept result.
const URIPrefix = "mcpx://results/"

// AnyHolder, given to [Store.Put] as the owner, keeps a result for whoever
// holds its ID: the ID (128 random bits from crypto/rand) is then the
// capability. It is for a client with no session to own it (the stateless
// era of the protocol); a session's owner key is never AnyHolder.
const AnyHolder = "*"

// ErrNotFound is returned for an ID that is unknown, expired, evicted or
// kept for another session; the cases are not told apart so that an ID
// owned by someone else reveals nothing.
var ErrNotFound = errors.New("result not found (unknown, expired, or not yours)")

// ErrElsewhere is wrapped by the error [Store.Read] returns for an ID
// another replica made: its URI names that replica, where the load
// balancer should have sent the read (see [Options.Replica]).
var ErrElsewhere = errors.New("result kept in another replica")

// ErrTooLarge is returned by Put for a result larger than the store can
// ever hold.
var ErrTooLarge = errors.New("larger than the result store")

// Kept is one kept part of a result: the whole of a text item, an image's
// or audio's decoded bytes, or a structuredContent's JSON.
type Kept struct {
	MIMEType string
	// Binary marks bytes that are read back as a blob (base64), not text.
	Binary bool
	Data   []byte
	// Cap is the size cap (maxResultBytes) of the result the part was cut
	// from: a read answers within it as the call did (see [ReadURI]), and
	// [Store.Read] never returns more bytes at once. 0 means no cap.
	Cap int
}

// Slice is what [Store.Read] returns: Data from Offset, of Total bytes in
// all, and the kind of the part kept and its Cap.
type Slice struct {
	Data          []byte
	Offset, Total int64
	MIMEType      string
	Binary        bool
	Cap           int
}

// Options bound a [Store]. A nil *Options means the defaults.
type Options struct {
	// MaxMemory bounds the bytes kept in memory; past it the least
	// recently used results move to disk (or are dropped when MaxDisk is
	// negative). 0 means DefaultMaxMemory (64 MiB).
	MaxMemory int64
	// MaxDisk bounds the bytes kept on disk, in a private directory (0700,
	// files 0600) made on first use and removed by Close; past it the least
	// recently used are dropped. 0 means DefaultMaxDisk (1 GiB); negative
	// keeps nothing on disk.
	MaxDisk int64
	// MaxAge is how long a result is kept after it was made. 0 means
	// DefaultMaxAge (1h).
	MaxAge time.Duration
	// Dir is where the private directory is made; "" means os.TempDir().
	Dir string
	// Now is the clock; nil means time.Now. Tests pass their own, so that
	// expiry by age needs no sleeping.
	Now func() time.Time
	// Replica names this process among replicas behind a load balancer
	// (MCPX_REPLICA): the ID of every result then starts with the name,
	// escaped as a URI path segment, and "~" (mcpx://results/a~3f…), so
	// that the balancer sends a read of its URI back here, where it is
	// kept; a read of another replica's ID is refused with [ErrElsewhere]
	// naming it. "" adds nothing.
	Replica string
}

type entry struct {
	id      string
	owner   string
	mime    string
	binary  bool
	cap     int
	size    int64
	data    []byte // nil when on disk
	path    string // the file when on disk
	created time.Time
	expire  *time.Timer
}

// Store keeps results, least recently used first out: in memory up to
// MaxMemory, then on disk up to MaxDisk, each for at most MaxAge. A result
// larger than MaxMemory goes straight to disk, so one bigger than the
// memory bound can still be read back. It is safe for concurrent use.
type Store struct {
	opts   Options
	prefix string // of every ID: the escaped replica and "~", or ""

	mu       sync.Mutex
	memSize  int64
	diskSize int64
	order    *list.List // front = most recently used
	byID     map[string]*list.Element
	dir      string // "" until the first result goes to disk
	closed   bool
}

// NewStore returns a store bounded by opts.
func NewStore(opts *Options) *Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxDisk == 0 {
		o.MaxDisk = DefaultMaxDisk
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Store{opts: o, order: list.New(), byID: map[string]*list.Element{}}
	if o.Replica != "" {
		s.prefix = url.PathEscape(o.Replica) + "~"
	}
	return s
}

// Put keeps k for owner (a session's key, or AnyHolder) and returns its
// unguessable ID. A result larger than both bounds is refused with
// ErrTooLarge rather than evicting everything else for something that
// cannot stay. The store does not copy k.Data.
func (s *Store) Put(owner string, k Kept) (string, error) {
	size := int64(len(k.Data))
	if size > s.opts.MaxMemory && (s.opts.MaxDisk < 0 || size > s.opts.MaxDisk) {
		return "", fmt.Errorf("result of %d bytes: %w (%d bytes)", size, ErrTooLarge, max(s.opts.MaxMemory, s.opts.MaxDisk))
	}
	id, err := newID()
	if err != nil {
		return "", err
	}
	id = s.prefix + id
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("result store closed")
	}
	s.expireLocked()
	e := &entry{id: id, owner: owner, mime: k.MIMEType, binary: k.Binary, cap: k.Cap, size: size, data: k.Data, created: s.opts.Now()}
	if size > s.opts.MaxMemory {
		// Writing under the lock keeps the bounds exact; only results
		// over the cap come here, and they are rare.
		if err := s.toDiskLocked(e); err != nil {
			return "", err
		}
	} else {
		s.memSize += size
	}
	s.byID[id] = s.order.PushFront(e)
	e.expire = time.AfterFunc(s.opts.MaxAge, s.expire)
	for s.memSize > s.opts.MaxMemory {
		s.spillLocked()
	}
	return id, nil
}

// Read returns up to length bytes of the result id from offset, for
// owner. length <= 0 means to the end. A result kept with a Cap is never
// read more than Cap bytes at once, so that no read loads a result of
// many megabytes whole.
func (s *Store) Read(owner, id string, offset, length int64) (Slice, error) {
	if err := s.elsewhere(id); err != nil {
		return Slice{}, err
	}
	s.mu.Lock()
	s.expireLocked()
	el, ok := s.byID[id]
	if !ok || el.Value.(*entry).owner != owner && el.Value.(*entry).owner != AnyHolder {
		s.mu.Unlock()
		return Slice{}, ErrNotFound
	}
	s.order.MoveToFront(el)
	e := el.Value.(*entry)
	sl := Slice{Offset: offset, Total: e.size, MIMEType: e.mime, Binary: e.binary, Cap: e.cap}
	if offset < 0 || offset > e.size {
		s.mu.Unlock()
		return sl, fmt.Errorf("offset %d outside the result's %d bytes", offset, e.size)
	}
	end := e.size
	if length > 0 && offset+length < e.size {
		end = offset + length
	}
	if e.cap > 0 && end-offset > int64(e.cap) {
		end = offset + int64(e.cap)
	}
	if e.data != nil {
		sl.Data = e.data[offset:end:end]
		s.mu.Unlock()
		return sl, nil
	}
	// Opened under the lock, so that an eviction cannot remove the file
	// first; read outside it (an open file outlives its removal).
	f, err := os.Open(e.path)
	s.mu.Unlock()
	if err != nil {
		return sl, fmt.Errorf("kept result: %w", err)
	}
	defer f.Close()
	sl.Data = make([]byte, end-offset)
	if _, err := f.ReadAt(sl.Data, offset); err != nil {
		return sl, fmt.Errorf("kept result: %w", err)
	}
	return sl, nil
}

// elsewhere reports an ID that names another replica than this one: the
// read reached the wrong process, which a "not found" would hide.
func (s *Store) elsewhere(id string) error {
	i := strings.LastIndexByte(id, '~')
	if i <= 0 || id[:i+1] == s.prefix {
		return nil
	}
	other, err := url.PathUnescape(id[:i])
	if err != nil {
		other = id[:i]
	}
	here := fmt.Sprintf("%q", s.opts.Replica)
	if s.opts.Replica == "" {
		here = "unnamed"
	}
	return fmt.Errorf("%w: %q, not this one (%s); route a read by the name before '~' in its URI", ErrElsewhere, other, here)
}

// Size reports the bytes the store holds now in memory and on disk.
func (s *Store) Size() (memory, disk int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memSize, s.diskSize
}

// Close drops every result and removes the store's directory. Put fails
// after it; Close may be called more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for el := s.order.Back(); el != nil; el = s.order.Back() {
		s.removeLocked(el)
	}
	if s.dir == "" {
		return nil
	}
	dir := s.dir
	s.dir = ""
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("result store: %w", err)
	}
	return nil
}

func (s *Store) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
}

func (s *Store) expireLocked() {
	cutoff := s.opts.Now().Add(-s.opts.MaxAge)
	// Reads reorder the list, so every entry is looked at; there are few.
	for el := s.order.Back(); el != nil; {
		prev := el.Prev()
		if el.Value.(*entry).created.Before(cutoff) {
			s.removeLocked(el)
		}
		el = prev
	}
}

// spillLocked moves the least recently used result in memory to disk, or
// drops it when the disk cannot take it.
func (s *Store) spillLocked() {
	for el := s.order.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*entry)
		if e.data == nil {
			continue
		}
		if s.opts.MaxDisk < 0 || e.size > s.opts.MaxDisk || s.toDiskLocked(e) != nil {
			s.removeLocked(el)
			return
		}
		s.memSize -= e.size
		return
	}
}

// toDiskLocked writes e to a file of its own, first dropping the least
// recently used results on disk until it fits, and lets go of its bytes.
func (s *Store) toDiskLocked(e *entry) error {
	for el := s.order.Back(); el != nil && s.diskSize+e.size > s.opts.MaxDisk; {
		prev := el.Prev()
		if el.Value.(*entry).path != "" {
			s.removeLocked(el)
		}
		el = prev
	}
	if s.dir == "" {
		dir, err := os.MkdirTemp(s.opts.Dir, "mcpx-results-") // 0700
		if err != nil {
			return fmt.Errorf("result store: %w", err)
		}
		s.dir = dir
	}
	path := filepath.Join(s.dir, e.id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("result store: %w", err)
	}
	_, err = f.Write(e.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("result store: %w", err)
	}
	e.path, e.data = path, nil
	s.diskSize += e.size
	return nil
}

func (s *Store) removeLocked(el *list.Element) {
	e := el.Value.(*entry)
	s.order.Remove(el)
	delete(s.byID, e.id)
	if e.expire != nil {
		e.expire.Stop()
	}
	if e.path != "" {
		os.Remove(e.path)
		s.diskSize -= e.size
	} else {
		s.memSize -= e.size
	}
}

// newID returns 128 random bits in hex.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("result id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
