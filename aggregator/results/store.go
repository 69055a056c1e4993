// Package results keeps tool results that were too big to hand to a client
// whole, so the client can read them back in slices by URI.
package results

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults bound what a Store holds: kept results are evicted oldest first
// once their total size passes MaxBytes, and dropped once older than MaxAge.
const (
	DefaultMaxBytes = 64 << 20
	DefaultMaxAge   = time.Hour
)

// URIPrefix starts the URI of every kept result.
const URIPrefix = "mcpx://results/"

// ErrNotFound is returned for an ID that is unknown, expired, evicted or
// kept for another session; the cases are not told apart so that an ID
// owned by someone else reveals nothing.
var ErrNotFound = errors.New("result not found (unknown, expired, or not yours)")

type entry struct {
	id      string
	owner   string
	data    []byte
	created time.Time
}

// Store is an LRU of kept results bounded by total bytes and by age.
// It is safe for concurrent use.
type Store struct {
	maxBytes int64
	maxAge   time.Duration
	now      func() time.Time

	mu    sync.Mutex
	size  int64
	order *list.List // front = most recently used
	byID  map[string]*list.Element
}

// NewStore returns a store bounded by maxBytes and maxAge; a zero value
// takes the default. now is the clock (nil means time.Now); tests pass
// their own so eviction by age needs no sleeping.
func NewStore(maxBytes int64, maxAge time.Duration, now func() time.Time) *Store {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if now == nil {
		now = time.Now
	}
	return &Store{maxBytes: maxBytes, maxAge: maxAge, now: now,
		order: list.New(), byID: map[string]*list.Element{}}
}

// Put keeps data for owner (a session id) and returns its unguessable ID.
// A result larger than the whole store is refused rather than evicting
// everything else for something that cannot stay.
func (s *Store) Put(owner string, data []byte) (string, error) {
	if int64(len(data)) > s.maxBytes {
		return "", fmt.Errorf("result of %d bytes exceeds the result store's %d bytes", len(data), s.maxBytes)
	}
	id, err := newID()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	e := &entry{id: id, owner: owner, data: data, created: s.now()}
	s.byID[id] = s.order.PushFront(e)
	s.size += int64(len(data))
	for s.size > s.maxBytes {
		s.removeLocked(s.order.Back())
	}
	return id, nil
}

// Read returns up to length bytes of the result id from offset, and the
// result's total size. length <= 0 means to the end.
func (s *Store) Read(owner, id string, offset, length int64) ([]byte, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	el, ok := s.byID[id]
	if !ok || el.Value.(*entry).owner != owner {
		return nil, 0, ErrNotFound
	}
	s.order.MoveToFront(el)
	data := el.Value.(*entry).data
	total := int64(len(data))
	if offset < 0 || offset > total {
		return nil, total, fmt.Errorf("offset %d outside the result's %d bytes", offset, total)
	}
	end := total
	if length > 0 && offset+length < total {
		end = offset + length
	}
	return data[offset:end:end], total, nil
}

// Size reports the bytes the store holds now.
func (s *Store) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

func (s *Store) expireLocked() {
	cutoff := s.now().Add(-s.maxAge)
	for el := s.order.Back(); el != nil; el = s.order.Back() {
		if !el.Value.(*entry).created.Before(cutoff) {
			return
		}
		s.removeLocked(el)
	}
}

func (s *Store) removeLocked(el *list.Element) {
	e := el.Value.(*entry)
	s.order.Remove(el)
	delete(s.byID, e.id)
	s.size -= int64(len(e.data))
}

// newID returns 128 random bits in hex.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("result id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// CutText cuts text at the last line boundary at or under max bytes and
// reports how many bytes and lines were cut. A first line longer than max
// is cut at max itself, so something is always shown.
func CutText(text string, max int) (kept string, cutBytes, cutLines int) {
	if len(text) <= max {
		return text, 0, 0
	}
	n := strings.LastIndexByte(text[:max], '\n') + 1
	if n == 0 {
		n = max
		for n > 0 && !utf8.RuneStart(text[n]) {
			n-- // not inside a character
		}
	}
	rest := text[n:]
	return text[:n], len(rest), strings.Count(rest, "\n") + boolInt(!strings.HasSuffix(rest, "\n") && rest != "")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
