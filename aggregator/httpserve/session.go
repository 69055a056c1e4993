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
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{} // closed when the core has returned

	// in hands one POST's messages at a time to the core's reading (Read),
	// in order, as a stdio client's lines are read. batch is what is left
	// of the one being read, and handled is closed once the core has
	// handled all of it; only Read uses them.
	in        chan postBatch
	batch     []posted
	handled   chan struct{}
	readEnded chan struct{} // closed once the core reads no more
	readOnce  sync.Once
	endOnce   sync.Once
	ended     chan struct{} // closed by end

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
	s := &httpSession{id: newSessionID(), h: h, legacy: legacy, view: view, principal: who, ctx: ctx, cancel: cancel,
		in: make(chan postBatch), readEnded: make(chan struct{}), done: make(chan struct{}), ended: make(chan struct{}),
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
		err := h.c.ServeSession(ctx, view, s, core.SessionOptions{ID: s.id})
		s.endRead() // a core that never read (it could not start) takes no POST either
		if err != nil {
			h.o.Logger.Debug("HTTP session ended", "session", s.id[:8], "err", err)
		}
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

// postBatch is the messages of one POST, and what send waits on.
type postBatch struct {
	msgs    []posted
	handled chan struct{}
}

// send has the core handle the messages of one POST, in order after
// those of the POSTs before, and send the requests they gathered for
// upstreams; it returns once they are handled. Waiting here keeps the
// hand-off to the core's reading on this goroutine's processor: without
// it, a legacy call over HTTP measured about a tenth slower than when
// the handler called the core itself.
func (s *httpSession) send(msgs []posted) error {
	select {
	case <-s.ended:
		return errSessionEnded
	default:
	}
	b := postBatch{msgs: msgs, handled: make(chan struct{})}
	select {
	case s.in <- b:
	case <-s.readEnded:
		return errSessionEnded
	}
	select {
	case <-b.handled:
	case <-s.readEnded: // the core stopped reading midway: what it read stands
	}
	return nil
}

// The session is the core's Conn: Read takes the POSTs' messages, Write
// routes the core's to their streams.
var _ interface {
	core.Conn
	core.Buffered
} = (*httpSession)(nil)

// Read returns the next message a POST carried; io.EOF once the client
// ended the session (DELETE, idle), which then answers what is in flight.
// The core calls it again only once it has handled the message before,
// so a POST whose last message was returned is handled then.
func (s *httpSession) Read() (core.Message, error) {
	for len(s.batch) == 0 {
		if s.handled != nil {
			close(s.handled)
			s.handled = nil
		}
		select {
		case b := <-s.in:
			s.batch, s.handled = b.msgs, b.handled
		case <-s.ended:
			s.endRead()
			return core.Message{}, io.EOF
		case <-s.ctx.Done():
			s.endRead()
			return core.Message{}, context.Cause(s.ctx)
		}
	}
	p := s.batch[0]
	s.batch = s.batch[1:]
	p.m.Invalid = p.err
	return p.m, nil
}

// Buffered reports whether the POST being read has messages left: its
// requests for upstreams go out together after its last.
func (s *httpSession) Buffered() bool { return len(s.batch) > 0 }

// Write routes one of the core's messages (route).
func (s *httpSession) Write(m core.Routed) error {
	s.route(m)
	return nil
}

// Close has nothing to release: the streams end with the session
// (startSession).
func (s *httpSession) Close() error { return nil }

// endRead makes every send from now on fail: no message is read after.
func (s *httpSession) endRead() { s.readOnce.Do(func() { close(s.readEnded) }) }

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
