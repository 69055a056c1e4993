package httpserve

import (
	"fmt"
	"sync"
)

// Limits of a stream's buffered events.
const (
	// streamBacklog is how many undelivered events a stream holds before
	// the session's writer waits (which holds up only that session).
	streamBacklog = 1024
	// streamReplay is how many delivered events a stream keeps for a
	// client that resumes with Last-Event-ID.
	streamReplay = 256
)

// stream is one sequence of server messages, as SSE events with ids
// "<stream>-<seq>" so that a client can resume it with Last-Event-ID.
type stream struct {
	id       string
	jsonOnly bool // a POST answered with plain JSON: only its answer
	pending  int  // requests on it not yet answered (guarded by session.mu)

	mu       sync.Mutex
	events   [][]byte // events[0] has sequence base
	base     int
	sent     int // sequence of the next event to deliver
	finished bool
	conn     int // generation of the connection writing it; 0 none
	gen      int
	changed  chan struct{} // closed and replaced on every change
}

func (st *stream) signal() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// push appends an event, waiting while the backlog is full until a
// reader catches up or the session ends.
func (st *stream) push(msg []byte, done <-chan struct{}) {
	st.mu.Lock()
	for st.base+len(st.events)-st.sent >= streamBacklog && !st.finished {
		ch := st.changed
		st.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return
		}
		st.mu.Lock()
	}
	st.events = append(st.events, msg)
	st.signal()
	st.mu.Unlock()
}

func (st *stream) finish() {
	st.mu.Lock()
	if !st.finished {
		st.finished = true
		st.signal()
	}
	st.mu.Unlock()
}

func (st *stream) isFinished() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.finished
}

func (st *stream) isAttached() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conn != 0
}

// attach makes a new connection the stream's writer, from the event after
// lastSeq (-1: from the first undelivered one); an older connection stops.
func (st *stream) attach(lastSeq int) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.gen++
	st.conn = st.gen
	if lastSeq >= 0 {
		st.sent = max(lastSeq+1, st.base)
	}
	st.signal()
	return st.gen
}

func (st *stream) detach(gen int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn == gen {
		st.conn = 0
	}
}

// next returns the next event for connection gen, or ok=false when gen is
// no longer the writer or the stream is finished and fully delivered; wait
// is a channel to wait on when there is nothing yet.
func (st *stream) next(gen int) (id string, msg []byte, wait <-chan struct{}, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn != gen {
		return "", nil, nil, false
	}
	if st.sent < st.base+len(st.events) {
		seq := st.sent
		msg = st.events[seq-st.base]
		st.sent++
		if extra := st.sent - st.base - streamReplay; extra > 0 {
			st.events = st.events[extra:]
			st.base += extra
		}
		st.signal()
		return fmt.Sprintf("%s-%d", st.id, seq), msg, nil, true
	}
	if st.finished {
		return "", nil, nil, false
	}
	return "", nil, st.changed, true
}

// drained reports whether every event was delivered.
func (st *stream) drained() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sent >= st.base+len(st.events)
}
