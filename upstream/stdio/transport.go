package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcpx/mcpx/callopt"
	"github.com/mcpx/mcpx/frame"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// Transport speaks newline-delimited JSON-RPC on a child's stdin and
// stdout. It replaces mcp-go's stdio transport on the hot path: that one
// decodes every line twice (an envelope, then the whole response, result
// included), and mcpx's send had to run each request on a goroutine of
// its own so that a server that stopped reading could not hold the
// caller. Here a line is scanned once for its envelope (see package
// rawjson), a result is handed on as the bytes the server wrote, and the
// caller writes its request itself, under a deadline its context sets.
// (BenchmarkCallSequential and BenchmarkCallLargeResult in cmd/mcpx
// measure the difference.)
//
// Notifications are delivered on the reader, in order, before any later
// response; requests from the server are answered on goroutines of their
// own, since answering may wait for mcpx's client.
type Transport struct {
	stdin   *os.File
	stdout  io.Reader
	max     int64                            // maxMessageBytes of one line; 0: no limit
	tooLong func(*frame.TooLongError) []byte // what an over-long line becomes
	dropped func(why string, line []byte)    // a line that is not JSON-RPC
	wsem    chan struct{}                    // one writer at a time: lines stay whole
	done    chan struct{}                    // closed by Close or when stdout ends
	once    sync.Once
	lost    error // why the transport broke; set before done is closed

	// broken is told when the transport breaks while the child may
	// still run (see errDeaf); nil ignores it.
	broken func(error)

	held     held              // lines of batches not yet flushed (batch.go)
	flushers []callopt.Flusher // the reader's: to flush once it has delivered what it read

	mu      sync.Mutex
	pending map[string]AnswerFunc // by raw id
	onNote  func(jsonrpc.Message)
	onReq   jsonrpc.RequestHandler
}

// Options are what a Transport does with what is not an answer.
type Options struct {
	// Max is the longest line read, in bytes (maxMessageBytes); 0: no
	// limit.
	Max int64
	// TooLong is what a line over Max becomes: a line to deliver in its
	// place (an error answer to its request), or nil for none.
	TooLong func(*frame.TooLongError) []byte
	// Dropped is told of a line that is not JSON-RPC, and why.
	Dropped func(why string, line []byte)
	// Broken is told when the transport breaks while the child may still
	// run (see errDeaf); nil ignores it.
	Broken func(error)
}

// New returns a Transport writing to the child's stdin and reading its
// stdout. Nothing is read until Start.
func New(stdin *os.File, stdout io.Reader, o Options) *Transport {
	if o.TooLong == nil {
		o.TooLong = func(*frame.TooLongError) []byte { return nil }
	}
	if o.Dropped == nil {
		o.Dropped = func(string, []byte) {}
	}
	return &Transport{stdin: stdin, stdout: stdout, max: o.Max, tooLong: o.TooLong, dropped: o.Dropped, broken: o.Broken,
		wsem: make(chan struct{}, 1), done: make(chan struct{}), pending: map[string]AnswerFunc{}}
}

func (t *Transport) Start(context.Context) error {
	go t.read()
	return nil
}

func (t *Transport) GetSessionId() string { return "" }

func (t *Transport) SetNotificationHandler(f func(jsonrpc.Message)) {
	t.mu.Lock()
	t.onNote = f
	t.mu.Unlock()
}

func (t *Transport) SetRequestHandler(f jsonrpc.RequestHandler) {
	t.mu.Lock()
	t.onReq = f
	t.mu.Unlock()
}

// Close ends the transport: the child's stdin is closed (its cue to
// exit) and every request waiting for an answer fails.
func (t *Transport) Close() error {
	t.fail(jsonrpc.ErrClosed)
	return t.stdin.Close()
}

func (t *Transport) fail(err error) {
	t.once.Do(func() {
		t.lost = err
		close(t.done)
	})
	// Every request still waiting is answered with the failure; one that
	// starts after this fails on done.
	t.mu.Lock()
	pending := t.pending
	t.pending = map[string]AnswerFunc{}
	t.mu.Unlock()
	for _, answer := range pending {
		answer(nil, t.lost)
	}
}

// An AnswerFunc receives the answer to one request, or why there is none,
// exactly once. It runs on the transport's reader, or on the goroutine
// that found the request could not go out, and must not block.
type AnswerFunc func(*jsonrpc.Message, error)

// SendRequest writes the request and waits for its answer, ctx or the
// end of the transport.
func (t *Transport) SendRequest(ctx context.Context, req jsonrpc.Message) (*jsonrpc.Message, error) {
	id := req.ID
	line := RequestLine(id, req.Method, req.Params)
	type reply struct {
		resp *jsonrpc.Message
		err  error
	}
	ch := make(chan reply, 1)
	key := string(id)
	if !t.await(key, func(resp *jsonrpc.Message, err error) { ch <- reply{resp, err} }) {
		return nil, t.lost
	}
	// Written here rather than posted: a write cut short reports why.
	if err := t.write(ctx, line); err != nil {
		t.Forget(key)
		return nil, err
	}
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		t.Forget(key)
		return nil, ctx.Err()
	}
}

// Begin sends a request line with id key and returns without waiting:
// answer gets its response, or the reason there is none, once. The line
// is written at once when the pipe takes it whole; the rest, if any, by
// a goroutine of its own under ctx (see post), so a caller on a read
// loop is never held by a server that does not read.
//
// With a [callopt.Batch] the line waits for the batch's flush.
func (t *Transport) Begin(ctx context.Context, b *callopt.Batch, key string, line []byte, answer AnswerFunc) {
	if !t.await(key, answer) {
		answer(nil, t.lost)
		return
	}
	failed := func(err error) {
		if t.Forget(key) {
			answer(nil, err)
		}
	}
	if b != nil {
		t.hold(b, line, failed)
		return
	}
	if t.holdForReader(line, failed) {
		return
	}
	t.post(ctx, line, failed)
}

// await registers answer for the request with id key; false means the
// transport has ended and nothing more can be sent.
func (t *Transport) await(key string, answer AnswerFunc) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.done:
		return false
	default:
	}
	t.pending[key] = answer
	return true
}

// Forget drops the request with id key, whose answer is no longer
// wanted, and reports whether it was still waiting (the caller now owns
// its answer).
func (t *Transport) Forget(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.pending[key]
	delete(t.pending, key)
	return ok
}

// RequestLine is a request as one line.
func RequestLine(id json.RawMessage, method string, params json.RawMessage) []byte {
	params = jsonrpc.OneLine(params)
	line := make([]byte, 0, len(params)+len(id)+len(method)+48)
	return append(jsonrpc.AppendRequest(line, id, method, params), '\n')
}

func (t *Transport) SendNotification(ctx context.Context, n jsonrpc.Message) error {
	params := jsonrpc.OneLine(n.Params)
	b := jsonrpc.AppendNotification(make([]byte, 0, len(params)+len(n.Method)+40), n.Method, params)
	return t.write(ctx, append(b, '\n'))
}

// read delivers each line the server writes until stdout ends.
func (t *Transport) read() {
	r := frame.NewReader(t.stdout, t.max)
	delivering := false
	for {
		line, err := r.Next()
		var tl *frame.TooLongError
		if errors.As(err, &tl) {
			line, err = t.tooLong(tl), nil // nil: dropped, but flush below still
		}
		if len(line) > 0 {
			if !delivering {
				t.readerDelivers()
				delivering = true
			}
			t.deliver(line, r.Owned())
		}
		drained := err != nil || !r.HasLine()
		if delivering && drained {
			// Everything read is delivered: the requests it let out
			// go to the server in one write.
			t.readerFlush()
			delivering = false
		}
		if len(t.flushers) > 0 && drained {
			// Likewise the answers held for one write go out before
			// the next read may wait.
			for _, f := range t.flushers {
				f.Flush()
			}
			clear(t.flushers)
			t.flushers = t.flushers[:0]
		}
		if err != nil {
			t.fail(jsonrpc.ErrClosed)
			return
		}
	}
}

// FlushAfterRead has f flushed once the reader has delivered what it has
// read. Only the reader calls it, from an answer it delivers.
func (t *Transport) FlushAfterRead(f callopt.Flusher) {
	if !slices.Contains(t.flushers, f) {
		t.flushers = append(t.flushers, f)
	}
}

// deliver hands on one line the server wrote. owned says the line is
// ours to keep (frame.Reader.Owned): a long line's members are then
// handed on as they are, not copied.
func (t *Transport) deliver(line []byte, owned bool) {
	env, err := jsonrpc.ReadEnvelope(line)
	if err != nil {
		t.dropped("not a JSON object", line)
		return
	}
	switch {
	case env.Method != nil && !env.HasID():
		t.notification(env, line, owned)
	case env.Method != nil:
		t.request(env, owned)
	case env.HasID():
		t.response(env, owned)
	default:
		t.dropped("neither a request, a notification nor a response", line)
	}
}

func (t *Transport) notification(env jsonrpc.Envelope, line []byte, owned bool) {
	method, ok := rawjson.String(env.Method)
	if !ok {
		t.dropped("a notification whose method is not a string", line)
		return
	}
	if len(env.Params) > 0 && !rawjson.Valid(env.Params) {
		// The envelope's scan skims the params; they go on to the
		// client, so they must be JSON.
		t.dropped("a notification whose params are not JSON", line)
		return
	}
	n := jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: method, Params: keep(owned, env.Params)}
	t.mu.Lock()
	f := t.onNote
	t.mu.Unlock()
	if f != nil {
		f(n)
	}
}

func (t *Transport) response(env jsonrpc.Envelope, owned bool) {
	t.mu.Lock()
	answer := t.pending[string(env.ID)]
	delete(t.pending, string(env.ID))
	t.mu.Unlock()
	if answer == nil {
		return // an answer to a request given up on
	}
	resp := &jsonrpc.Message{JSONRPC: jsonrpc.Version}
	if env.HasError() {
		resp.Error = keep(owned, env.Error)
	} else {
		resp.Result = keep(owned, env.Result)
	}
	answer(resp, nil)
}

// keep is b for the receiver to keep: b itself when the line is ours
// (owned), else a copy, since the reader reuses its buffer.
func keep(owned bool, b json.RawMessage) json.RawMessage {
	if owned {
		return b
	}
	return append(json.RawMessage(nil), b...)
}

// request answers a request from the server on a goroutine of its own.
func (t *Transport) request(env jsonrpc.Envelope, owned bool) {
	method, _ := rawjson.String(env.Method)
	req := jsonrpc.Message{JSONRPC: jsonrpc.Version, ID: keep(owned, env.ID), Method: method}
	if len(env.Params) > 0 {
		req.Params = keep(owned, env.Params)
	}
	t.mu.Lock()
	f := t.onReq
	t.mu.Unlock()
	go func() {
		var resp *jsonrpc.Message
		if f != nil {
			var err error
			if resp, err = f(context.Background(), req); err != nil {
				resp = jsonrpc.NewError(req.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
			}
		}
		if resp == nil {
			resp = jsonrpc.NewError(req.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not support " + method})
		}
		b, err := json.Marshal(resp)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = t.write(ctx, append(b, '\n'))
	}()
}
