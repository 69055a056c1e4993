package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/jsonrpc"
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

	// legacy is set, before the reader starts, for a relay of the legacy protocol:
	// its answers carry no id, so calls go one at a time (callSlot) and an
	// answer belongs to the one call in flight. connID is the connection
	// its forwarded messages name; guarded by mu.
	legacy   bool
	callSlot chan struct{}
	connID   string

	up time.Time // when the handshake passed; set before the socket is shared

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
	return &socket{conn: conn, notify: notify, pending: map[string]*pendingCall{}, done: make(chan struct{}), callSlot: make(chan struct{}, 1)}
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
		case f.Method != "" && (len(f.ID) == 0 || s.legacy):
			s.notify(f)
		case s.legacy:
			s.deliverLegacy(f, data)
		case len(f.ID) > 0 && f.Method == "":
			s.deliver(f)
		}
	}
}

func (s *socket) deliver(f frame) {
	key := jsonrpc.IDKey(f.ID)
	s.mu.Lock()
	p := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if p == nil {
		return // late answer to a call that gave up
	}
	if len(f.Error) > 0 && string(f.Error) != "null" {
		p.reply <- reply{err: jsonrpc.DecodeError(f.Error)}
		return
	}
	p.reply <- reply{result: f.Result}
}

// deliverLegacy hands a legacy answer to the call in flight: its
// result or error, or the whole object when it has neither. An error
// nobody waits for means the relay dropped our connection.
func (s *socket) deliverLegacy(f frame, data json.RawMessage) {
	s.mu.Lock()
	var key string
	var p *pendingCall
	if len(f.ID) > 0 {
		key = jsonrpc.IDKey(f.ID)
		p = s.pending[key]
	}
	if p == nil {
		for k, q := range s.pending { // at most one: calls go one at a time
			key, p = k, q
		}
	}
	delete(s.pending, key)
	s.mu.Unlock()
	hasErr := len(f.Error) > 0 && string(f.Error) != "null"
	switch {
	case p == nil && hasErr:
		params, _ := json.Marshal(map[string]string{"reason": jsonrpc.DecodeError(f.Error).Message})
		s.notify(frame{Message: jsonrpc.Message{Method: "disconnected", Params: params}})
	case p == nil:
	case hasErr:
		p.reply <- reply{err: jsonrpc.DecodeError(f.Error)}
	case len(f.Result) > 0:
		p.reply <- reply{result: f.Result}
	default:
		p.reply <- reply{result: data}
	}
}

// call sends one request and waits for its answer, the socket's end, or
// ctx. Ids are numbers: never "proxy:" or "ext:", which the relay reserves.
func (s *socket) call(ctx context.Context, method string, params any, forwarded bool) (json.RawMessage, error) {
	var connID string
	if s.legacy {
		select {
		case s.callSlot <- struct{}{}:
			defer func() { <-s.callSlot }()
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			return nil, s.closedErr()
		}
		if forwarded {
			s.mu.Lock()
			connID = s.connID
			s.mu.Unlock()
		}
	}
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

	raw := json.RawMessage("{}")
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("%s: encode params: %w", method, err)
		}
		raw = b
	}
	// The legacy protocol routes by connectionId, after the members.
	msg, err := json.Marshal(frame{Message: *jsonrpc.NewRequest(json.RawMessage(id), method, raw), ConnectionID: connID})
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
		if s.legacy {
			// Its answer may still come, and with no id it would be taken
			// for the next call's: start over on a new connection.
			s.close(fmt.Errorf("%w: gave up on %s, whose late answer a legacy relay could not tell from the next one's", ErrRelayClosed, method))
		}
		return nil, ctx.Err()
	}
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

// closed reports whether the socket has ended.
func (s *socket) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *socket) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
