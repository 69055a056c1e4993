package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/mcpx/mcpx/jsonrpc"
)

// inbox routes the messages a server sends, whichever stream they come
// on: an answer to the request waiting for it, a notification to the
// notification handler, a request to the request handler.
type inbox struct {
	log *slog.Logger
	// post sends the answer to a server's request back to it.
	post func(ctx context.Context, what string, body []byte) error

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Message // by the id's JSON
	onNote  func(jsonrpc.Message)
	onReq   jsonrpc.RequestHandler
	err     error // set once closed: why nothing more is answered
}

func newInbox(log *slog.Logger, post func(ctx context.Context, what string, body []byte) error) *inbox {
	return &inbox{log: log, post: post, pending: map[string]chan *jsonrpc.Message{}}
}

func (in *inbox) setNotificationHandler(f func(jsonrpc.Message)) {
	in.mu.Lock()
	in.onNote = f
	in.mu.Unlock()
}

func (in *inbox) setRequestHandler(f jsonrpc.RequestHandler) {
	in.mu.Lock()
	in.onReq = f
	in.mu.Unlock()
}

// expect encodes a request about to be sent and registers it: its answer
// will come on the channel. Call done once the answer came or was given
// up on.
func (in *inbox) expect(req jsonrpc.Message) (body []byte, answer <-chan *jsonrpc.Message, done func(), err error) {
	body, err = json.Marshal(req)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encode %s: %w", req.Method, err)
	}
	key := string(req.ID)
	ch := make(chan *jsonrpc.Message, 1)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err != nil {
		return nil, nil, nil, in.err
	}
	if _, dup := in.pending[key]; dup {
		return nil, nil, nil, fmt.Errorf("request id %s is already in flight", key)
	}
	in.pending[key] = ch
	return body, ch, func() {
		in.mu.Lock()
		delete(in.pending, key)
		in.mu.Unlock()
	}, nil
}

// close ends the inbox: requests waiting, and any sent later, fail with
// err.
func (in *inbox) close(err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err != nil {
		return
	}
	in.err = err
	for key, ch := range in.pending {
		close(ch)
		delete(in.pending, key)
	}
}

// closedErr is why the inbox was closed; nil while it is open.
func (in *inbox) closedErr() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}

// deliver routes one message. A notification is handled before deliver
// returns, so that notifications keep their order and come before a later
// answer; a request is answered on a goroutine of its own, under ctx.
func (in *inbox) deliver(ctx context.Context, data []byte) {
	var m jsonrpc.Message
	if err := json.Unmarshal(data, &m); err != nil {
		in.log.Debug("ignored a message that is not JSON-RPC", "err", err, "bytes", len(data))
		return
	}
	switch {
	case m.IsRequest() && !validID(m.ID):
		in.log.Debug("ignored a request whose id is neither a string nor a number", "id", string(m.ID))
	case m.IsRequest():
		in.request(ctx, m)
	case m.IsNotification():
		in.notification(m)
	case m.HasID():
		in.response(&m)
	default:
		in.log.Debug("ignored a message with neither method nor id", "bytes", len(data))
	}
}

func (in *inbox) response(m *jsonrpc.Message) {
	in.mu.Lock()
	ch := in.pending[string(m.ID)]
	delete(in.pending, string(m.ID))
	in.mu.Unlock()
	if ch == nil {
		in.log.Debug("ignored an answer to no request waiting", "id", string(m.ID))
		return
	}
	m.Params = nil
	if !m.HasError() && len(m.Result) == 0 {
		m.Result = json.RawMessage(`{}`)
	}
	ch <- m
}

func (in *inbox) notification(n jsonrpc.Message) {
	in.mu.Lock()
	f := in.onNote
	in.mu.Unlock()
	if f != nil {
		f(n)
	}
}

func (in *inbox) request(ctx context.Context, req jsonrpc.Message) {
	id := req.ID
	in.mu.Lock()
	f := in.onReq
	in.mu.Unlock()
	go func() {
		var resp *jsonrpc.Message
		if f != nil {
			var err error
			resp, err = f(ctx, req)
			if err != nil {
				resp = jsonrpc.NewError(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
			}
		}
		if resp == nil {
			resp = jsonrpc.NewError(id, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not support " + req.Method})
		}
		body, err := json.Marshal(resp)
		if err == nil {
			err = in.post(ctx, "POST the answer to "+req.Method, body)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			in.log.Debug("could not answer the server's request", "method", req.Method, "err", err)
		}
	}()
}

// validID reports whether id is a string or a number, as JSON-RPC asks
// of a request's id: an answer to anything else could not be matched.
func validID(id json.RawMessage) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9')
}
