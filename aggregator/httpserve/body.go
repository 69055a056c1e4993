package httpserve

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpx/mcpx/jsonrpc"
)

// Request bodies. Every body a guarded route gets is read here, whole,
// before its handler runs, and bounded before it is read: a
// Content-Length over maxMessageBytes is refused at once (413) without a
// byte of it read, a body of unknown length (chunked) is cut at the
// limit as it streams (413), and all bodies share one budget of memory
// (Options.MaxBodyMemory): a body reserves its Content-Length before it
// is read, or, of unknown length, what its buffer grows to as it is
// read; past the budget the request is refused (503, Retry-After). Both
// refusals close the connection, so that the client stops sending.
//
// A body holds no more than its own size when its length is known (one
// buffer of exactly that size), and no more than the limit plus
// bodyGrowMax when it is not. Its reservation lasts while its handler
// runs and, for a legacy session's request, until that request is
// answered: the parsed message aliases the body and the session core
// keeps it while the call runs, after a POST to /messages (or a client
// that went away) has returned. A large body stays counted after that
// until the garbage collector has freed it (see [bodyBudget]).

// Growth of the buffer of a body of unknown length: it starts at
// bodyGrowMin and doubles up to bodyGrowMax; a body longer than that
// gets one buffer of the limit. So a small chunked body reserves little,
// and a large one never holds two large buffers at once.
const (
	bodyGrowMin = 64 << 10
	bodyGrowMax = 1 << 20
)

// retryAfter is the Retry-After of a 503 past the body budget, in
// seconds: bodies are released as their calls end.
const retryAfter = "1"

// bodyBudget is the memory that the bodies of requests being read or
// handled share. Safe for concurrent use.
//
// A large buffer given back (bodyGrowMax or more: one the collector frees
// whole) is garbage until the collector runs, and at serve's GOGC the
// heap may grow to five times what was live at the last collection
// before it does: bursts of bodies at the limit would leave the process
// several budgets large. So such a buffer stays counted, pending, until
// a collection that began after it was given back has ended: collect
// runs in the background, once at a time, when a quarter of the budget is
// pending or when a body does not fit while some is. What bodies cost
// the process, garbage included, stays within the budget; the buffers
// collected are reused by the next bodies.
type bodyBudget struct {
	max     int64
	collect func() // runtime.GC; what a test passes instead; nil: none

	mu         sync.Mutex
	used       int64 // reserved, pending included
	pending    int64 // given back in large buffers, not yet collected
	collecting bool
}

func newBodyBudget(max int64, collect func()) *bodyBudget {
	return &bodyBudget{max: max, collect: collect}
}

// take reserves n bytes; false, reserving nothing, when that would go
// past the budget.
func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		if b.pending > 0 {
			b.startCollect()
		}
		return false
	}
	b.used += n
	return true
}

// give gives back n bytes: at once for a small buffer, after the next
// collection for a large one.
func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n < bodyGrowMax || b.collect == nil {
		b.used -= n
		return
	}
	b.pending += n
	if b.pending >= b.max/4 {
		b.startCollect()
	}
}

// startCollect has collect run, unless it runs already; b.mu held. What
// was pending when a collection began is given back when it ends.
func (b *bodyBudget) startCollect() {
	if b.collecting {
		return
	}
	b.collecting = true
	go func() {
		for {
			b.mu.Lock()
			freed := b.pending
			b.mu.Unlock()
			b.collect()
			b.mu.Lock()
			b.used -= freed
			b.pending -= freed
			// A quarter given back while it ran: once more.
			again := b.pending >= b.max/4
			b.collecting = again
			b.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}

// inUse is the bytes reserved now.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// hold is one body's reservation. It is given back when the last of its
// holders lets go: the request's handler, and each request of a legacy
// session the body carried until that request is answered.
type hold struct {
	budget *bodyBudget
	n      int64 // changed only while the body is read, before it is shared
	refs   atomic.Int32
}

// retain adds a holder.
func (h *hold) retain() { h.refs.Add(1) }

// release lets one holder go; the last gives the reservation back.
func (h *hold) release() {
	if h.refs.Add(-1) == 0 {
		h.budget.give(h.n)
	}
}

// grow reserves up to n bytes in all; false, leaving the reservation as
// it was, past the budget.
func (h *hold) grow(n int64) bool {
	if n <= h.n {
		return true
	}
	if !h.budget.take(n - h.n) {
		return false
	}
	h.n = n
	return true
}

// shrink gives back what is reserved over n bytes.
func (h *hold) shrink(n int64) {
	if n < h.n {
		h.budget.give(h.n - n)
		h.n = n
	}
}

// body is a request body read whole, as handlers behind the guards get
// r.Body: it reads as the body did, and Bytes gives it without a copy.
type body struct {
	*bytes.Reader
	data []byte
	hold *hold
}

// Bytes returns the whole body; the caller must not change it.
func (b *body) Bytes() []byte { return b.data }

func (b *body) Close() error { return nil }

// bodyOf returns what the body gate read of r, and its reservation
// (nil: no body).
func bodyOf(r *http.Request) ([]byte, *hold) {
	if b, ok := r.Body.(*body); ok {
		return b.data, b.hold
	}
	return nil, nil
}

// errBodyTooLarge is readUnknown's error for a body over the limit.
var errBodyTooLarge = errors.New("request body over the limit")

// errBodyBudget is readUnknown's error when growing its buffer would go
// past the budget.
var errBodyBudget = errors.New("request bodies over the budget")

// bounded is the body gate: it reads the request's body whole within
// the limit and the budget (see above), answers 413 or 503 itself, and
// passes the rest on with r.Body the body read.
func (h *httpHandler) bounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b, ok := h.readBody(w, r)
		if !ok {
			return
		}
		defer b.hold.release()
		r2 := new(http.Request)
		*r2 = *r
		r2.Body = b
		next.ServeHTTP(w, r2)
	})
}

// readBody reads r's body within the limit and the budget, or answers.
func (h *httpHandler) readBody(w http.ResponseWriter, r *http.Request) (*body, bool) {
	limit := h.o.MaxMessageBytes
	n := r.ContentLength
	if n > limit {
		h.tooLarge(w, limit)
		return nil, false
	}
	hd := &hold{budget: h.bodies}
	hd.refs.Store(1)
	first := n
	if n < 0 {
		first = min(limit, bodyGrowMin)
	}
	if !hd.grow(first) {
		h.busy(w)
		return nil, false
	}
	var data []byte
	var err error
	if n >= 0 {
		data = make([]byte, n)
		_, err = io.ReadFull(r.Body, data)
	} else {
		data, err = readUnknown(r.Body, limit, hd)
	}
	switch {
	case err == nil:
		return &body{Reader: bytes.NewReader(data), data: data, hold: hd}, true
	case errors.Is(err, errBodyTooLarge):
		h.tooLarge(w, limit)
	case errors.Is(err, errBodyBudget):
		h.busy(w)
	default:
		httpError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "reading the body: "+err.Error())
	}
	hd.release()
	return nil, false
}

// readUnknown reads a body of unknown length, of at most limit bytes,
// its buffer growing as hd's reservation can (see bodyGrowMin): it
// holds at most limit plus bodyGrowMax bytes at once, and what it
// returns has hd's reservation shrunk to its capacity. A full buffer
// grows only when a read past it finds more, so a body that fills it
// exactly costs no larger one.
func readUnknown(r io.Reader, limit int64, hd *hold) ([]byte, error) {
	buf := make([]byte, 0, hd.n)
	for {
		if len(buf) == cap(buf) {
			var more [512]byte
			n, err := readSome(r, more[:])
			switch {
			case n == 0 && err == io.EOF:
				hd.shrink(int64(cap(buf)))
				return buf, nil
			case n == 0:
				return nil, err
			case int64(len(buf)) >= limit:
				return nil, errBodyTooLarge
			}
			next := int64(cap(buf)) * 2
			if next > bodyGrowMax {
				next = limit
			}
			next = min(next, limit)
			// The old buffer and the new one, while it is copied.
			if !hd.grow(int64(cap(buf)) + next) {
				return nil, errBodyBudget
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
			hd.shrink(next)
			if int64(len(buf)+n) > limit {
				return nil, errBodyTooLarge
			}
			buf = append(buf, more[:n]...)
			if err == io.EOF {
				hd.shrink(int64(cap(buf)))
				return buf, nil
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			hd.shrink(int64(cap(buf)))
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readSome reads into p until it reads something or fails.
func readSome(r io.Reader, p []byte) (int, error) {
	for {
		n, err := r.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// tooLarge answers 413 naming the limit, and closes the connection:
// what the client has not sent is not read.
func (h *httpHandler) tooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close")
	httpError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest,
		"request body over maxMessageBytes ("+strconv.FormatInt(limit, 10)+" bytes)")
}

// busy answers 503 with Retry-After when the bodies in flight hold the
// whole budget, and closes the connection.
func (h *httpHandler) busy(w http.ResponseWriter) {
	h.o.Logger.Debug("HTTP request refused: the request bodies in flight hold the whole budget", "maxBodyMemory", h.bodies.max)
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", retryAfter)
	httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError,
		"busy: the request bodies in flight hold all of http.maxBodyMemory ("+strconv.FormatInt(h.bodies.max, 10)+" bytes); retry after "+retryAfter+"s")
}
