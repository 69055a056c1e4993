package httpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/internal/principal"
)

// httpSession is one HTTP client: a legacy session of the core (the
// same as stdio's) that handles each message a POST carries, decoded once
// (streamable.go). route puts each message of its output on a stream by
// what the core says it is: an answer on the stream of the POST that
// asked, progress on the stream of the request it reports on, anything
// else on the standalone (GET) stream, or while none is connected on the
// newest open POST stream.
type httpSession struct {
	id     string
	h      *httpHandler
	legacy bool   // HTTP+SSE: every message goes to the one stream
	view   string // the profile of the path it began at (/mcp/NAME); "": none
	// principal is the API key that opened it (""; the token or none):
	// only requests with the same may use it.
	principal string
	cancel    context.CancelFunc
	ready     chan struct{} // closed when core is set
	done      chan struct{} // closed when the core has returned

	// inMu makes the core handle one POST's messages at a time, in
	// order, as a stdio read loop does a client's lines.
	inMu     sync.Mutex
	core     *core.Session
	inClosed bool // no more messages: the session ends
	endOnce  sync.Once
	ended    chan struct{} // closed by end

	mu         sync.Mutex
	byID       map[string]*stream // request id -> stream
	streams    map[string]*stream // by stream id, for resumption
	standalone *stream
	posts      []*stream // open POST streams, oldest first
	nextStream int
	lastActive time.Time
	attached   int // connections writing a stream now
	// bodies holds, by request id, the reservations of the bodies that
	// carried requests still in flight (body.go); bodiesDone once the
	// session has let them all go.
	bodies     map[string][]*hold
	bodiesDone bool
}

func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errSessionEnded is send's error for a session that ended.
var errSessionEnded = errors.New("the session ended")

// startSession starts a session core for who, the principal of the
// request that opens it; nil when shutting down.
func (h *httpHandler) startSession(legacy bool, view, who string) *httpSession {
	ctx, cancel := context.WithCancel(principal.With(h.ctx, who))
	s := &httpSession{id: newSessionID(), h: h, legacy: legacy, view: view, principal: who, cancel: cancel,
		ready: make(chan struct{}), done: make(chan struct{}), ended: make(chan struct{}),
		byID: map[string]*stream{}, streams: map[string]*stream{}, bodies: map[string][]*hold{}, lastActive: time.Now()}
	s.standalone = s.newStream(false)
	if !h.add(s) {
		cancel()
		return nil
	}
	go func() {
		defer h.wg.Done()
		defer cancel()
		// The session core names itself by the HTTP session (the audit
		// trail's session field), not "stdio".
		err := h.c.ServeSession(ctx, view, core.SessionOptions{ID: s.id, Route: s.route}, func(c *core.Session) (err error) {
			s.core = c
			close(s.ready)
			select {
			case <-s.ended:
				err = io.EOF // the client's input ended: answer what is in flight
			case <-ctx.Done():
				err = context.Cause(ctx)
			}
			// No message is handled after this: the core is ending.
			s.inMu.Lock()
			s.inClosed = true
			s.inMu.Unlock()
			return err
		})
		if err != nil {
			h.o.Logger.Debug("HTTP session ended", "session", s.id[:8], "err", err)
		}
		s.inMu.Lock()
		s.inClosed = true
		s.inMu.Unlock()
		h.remove(s)
		s.mu.Lock()
		for _, st := range s.streams {
			st.finish()
		}
		s.releaseBodies()
		s.mu.Unlock()
		close(s.done)
	}()
	h.o.Logger.Debug("HTTP session started", "session", s.id[:8], "legacy", legacy)
	return s
}

// end ends the session: the core sees its input end, answers what is in
// flight within the drain, and flushes what is queued.
func (s *httpSession) end() {
	s.endOnce.Do(func() { close(s.ended) })
	go func() {
		// A core whose writer is stuck on a stream nobody reads is
		// stopped outright after the drain.
		select {
		case <-s.done:
		case <-time.After(2 * s.h.o.Drain):
			s.cancel()
		}
	}()
}

func (s *httpSession) idleSince(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attached > 0 || len(s.byID) > 0 {
		return 0
	}
	return now.Sub(s.lastActive)
}

func (s *httpSession) touch() {
	s.mu.Lock()
	s.lastActive = time.Now()
	s.mu.Unlock()
}

// newStream makes a stream; call with s.mu held or before s is shared.
func (s *httpSession) newStream(jsonOnly bool) *stream {
	st := &stream{id: strconv.Itoa(s.nextStream), jsonOnly: jsonOnly, changed: make(chan struct{})}
	s.nextStream++
	s.streams[st.id] = st
	return st
}

// send has the core handle the messages of one POST, in order, and then
// send the requests they gathered for upstreams.
func (s *httpSession) send(msgs []posted) error {
	select {
	case <-s.ready:
	case <-s.done:
		return errSessionEnded
	}
	s.inMu.Lock()
	defer s.inMu.Unlock()
	if s.inClosed {
		return errSessionEnded
	}
	select {
	case <-s.ended:
		return errSessionEnded
	default:
	}
	for _, p := range msgs {
		s.core.Handle(p.m, p.err)
	}
	s.core.FlushBatch()
	return nil
}

// holdBody keeps hd, the reservation of the body that carried request
// id, until that request is answered or the session ends: the core keeps
// the message, which aliases the body, while the call runs (body.go).
// Call with s.mu held.
func (s *httpSession) holdBody(id json.RawMessage, hd *hold) {
	if hd == nil || s.bodiesDone {
		return
	}
	hd.retain()
	s.bodies[string(id)] = append(s.bodies[string(id)], hd)
}

// answered lets go of the body of the request id, which is answered (or
// cancelled); call with s.mu held. A reused id's bodies go in order.
func (s *httpSession) answered(id json.RawMessage) {
	held := s.bodies[string(id)]
	if len(held) == 0 {
		return
	}
	held[0].release()
	if len(held) == 1 {
		delete(s.bodies, string(id))
	} else {
		s.bodies[string(id)] = held[1:]
	}
}

// releaseBodies lets go of every body the session holds, when it has
// ended; call with s.mu held.
func (s *httpSession) releaseBodies() {
	s.bodiesDone = true
	for id, held := range s.bodies {
		for _, hd := range held {
			hd.release()
		}
		delete(s.bodies, id)
	}
}

// route puts one message from the core on its stream, waiting while that
// stream's backlog is full (which holds up this session only).
func (s *httpSession) route(m core.Routed) {
	s.mu.Lock()
	if m.Answers != nil {
		s.answered(m.Answers)
	}
	var st *stream
	switch {
	case s.legacy:
		st = s.standalone
	case m.Answers != nil:
		st = s.byID[string(m.Answers)]
		delete(s.byID, string(m.Answers))
		if st != nil {
			st.pending--
		}
	case m.Of != nil:
		if t := s.byID[string(m.Of)]; t != nil && !t.jsonOnly && !t.isFinished() {
			st = t
		}
	}
	if st == nil && m.Msg == nil {
		s.mu.Unlock()
		return // a cancelled request that has no stream (any more)
	}
	if st == nil {
		st = s.standalone
		if !s.standalone.isAttached() && len(s.posts) > 0 {
			st = s.posts[len(s.posts)-1]
		}
	}
	last := st != s.standalone && st.pending == 0 && m.Answers != nil
	s.mu.Unlock()
	if m.Msg != nil {
		st.push(m.Msg, s.done)
	}
	if last {
		s.closeStream(st)
	}
}

// closeStream finishes a POST stream whose every request is answered.
func (s *httpSession) closeStream(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.posts {
		if p == st {
			s.posts = append(s.posts[:i], s.posts[i+1:]...)
			break
		}
	}
	st.finish()
}

// serveSSE writes the stream to w as server-sent events until it is
// finished and delivered, the client goes, another connection takes it
// over, or the session ends. prelude is written first (the legacy
// transport's endpoint event).
func (s *httpSession) serveSSE(w http.ResponseWriter, r *http.Request, st *stream, lastSeq int, prelude string) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	if prelude != "" {
		io.WriteString(w, prelude)
	}
	if fl != nil {
		fl.Flush()
	}
	gen := st.attach(lastSeq)
	s.mu.Lock()
	s.attached++
	s.mu.Unlock()
	defer func() {
		st.detach(gen)
		s.mu.Lock()
		s.attached--
		s.lastActive = time.Now()
		s.mu.Unlock()
	}()
	keepalive := time.NewTicker(25 * time.Second)
	defer keepalive.Stop()
	var gap gapAfterProgress // ssegap.go
	for {
		id, msg, wait, ok := st.next(gen)
		if !ok {
			return
		}
		if wait == nil {
			if s.legacy {
				gap.before(r.Context(), msg)
			}
			var b strings.Builder
			if !s.legacy {
				b.WriteString("id: " + id + "\n")
			}
			b.WriteString("event: message\ndata: ")
			b.Write(msg)
			b.WriteString("\n\n")
			if _, err := io.WriteString(w, b.String()); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			continue
		}
		select {
		case <-wait:
		case <-keepalive.C:
			// Proxies close a stream that stays silent too long.
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		case <-r.Context().Done():
			return
		}
	}
}
