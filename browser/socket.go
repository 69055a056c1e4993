package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// ErrRelayClosed is wrapped by errors of calls cut off because the relay
// socket closed.
var ErrRelayClosed = errors.New("browser relay connection closed")

// ErrExtensionDisconnected is wrapped by errors of calls cut off because
// the relay said the extension went away.
var ErrExtensionDisconnected = errors.New("the browser extension disconnected")

// socket is one WebSocket connection to the relay: ids, pending calls, and
// the one reader goroutine on the connection's lifetime.
type socket struct {
	conn   *websocket.Conn
	ids    atomic.Int64
	notify func(frame)

	mu      sync.Mutex
	pending map[string]*pendingCall
	err     error // why the socket ended
	done    chan struct{}
}

type pendingCall struct {
	forwarded bool // sent to the extension, not answered by the relay
	reply     chan reply
}

type reply struct {
	result json.RawMessage
	err    error
}

func newSocket(conn *websocket.Conn, notify func(frame)) *socket {
	return &socket{conn: conn, notify: notify, pending: map[string]*pendingCall{}, done: make(chan struct{})}
}

// readLoop delivers responses and notifications until the socket fails,
// then fails every call in flight at once.
func (s *socket) readLoop(ctx context.Context) {
	var err error
	defer func() { s.close(fmt.Errorf("%w: %v", ErrRelayClosed, err)) }()
	for {
		var data []byte
		_, data, err = s.conn.Read(ctx)
		if err != nil {
			return
		}
		var f frame
		if json.Unmarshal(data, &f) != nil {
			continue // a peer's garbage must not end the session
		}
		switch {
		case f.Method != "" && len(f.ID) == 0:
			s.notify(f)
		case len(f.ID) > 0 && f.Method == "":
			s.deliver(f)
		}
	}
}

func (s *socket) deliver(f frame) {
	key := idKey(f.ID)
	s.mu.Lock()
	p := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if p == nil {
		return // late answer to a call that gave up
	}
	if len(f.Error) > 0 && string(f.Error) != "null" {
		p.reply <- reply{err: decodeError(f.Error)}
		return
	}
	p.reply <- reply{result: f.Result}
}

// call sends one request and waits for its answer, the socket's end, or
// ctx. Ids are numbers: never "proxy:" or "ext:", which the relay reserves.
func (s *socket) call(ctx context.Context, method string, params any, forwarded bool) (json.RawMessage, error) {
	id := strconv.FormatInt(s.ids.Add(1), 10)
	p := &pendingCall{forwarded: forwarded, reply: make(chan reply, 1)}
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return nil, err
	}
	s.pending[id] = p
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()

	if params == nil {
		params = struct{}{}
	}
	msg, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", mustAtoi(id), method, params})
	if err != nil {
		return nil, fmt.Errorf("%s: encode params: %w", method, err)
	}
	if err := s.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w: %v", method, ErrRelayClosed, err)
	}
	select {
	case r := <-p.reply:
		return r.result, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func mustAtoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// failForwarded fails the calls waiting on the extension, which will not
// answer them now.
func (s *socket) failForwarded(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, p := range s.pending {
		if p.forwarded {
			p.reply <- reply{err: err}
			delete(s.pending, id)
		}
	}
}

// close ends the socket and fails everything in flight with err. It is
// idempotent.
func (s *socket) close(err error) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.err = err
	for id, p := range s.pending {
		p.reply <- reply{err: err}
		delete(s.pending, id)
	}
	s.mu.Unlock()
	s.conn.CloseNow()
	close(s.done)
}

func (s *socket) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
