package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/jsonrpc"
)

// Headers of the streamable HTTP transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
)

// ErrSessionEnded is returned, and given to OnLost, when the server
// answers 404 to a request of its session: the session is gone (the
// server restarted, or expired it) and only a new initialize helps.
var ErrSessionEnded = errors.New("the server ended the session (HTTP 404)")

// Streamable is a client of the streamable HTTP transport: each message
// is POSTed to the server's one endpoint, which answers with JSON or with
// an SSE stream that ends with the answer; a GET stream (with
// Options.Listen) carries what the server sends unasked.
type Streamable struct {
	url  string
	opts Options
	in   *inbox

	mu       sync.Mutex
	session  string
	protocol string
	life     context.Context
	stop     context.CancelFunc
	listen   sync.Once
	lost     sync.Once
	closed   bool
	wg       sync.WaitGroup
	// toolHeaders gives, by tool name, the arguments a modern tools/call
	// also sends as headers; nil for none.
	toolHeaders func(tool string) []ParamHeader
}

// NewStreamable returns the transport to the server at url. Nothing is
// sent before the first request.
func NewStreamable(url string, opts Options) *Streamable {
	t := &Streamable{url: url, opts: opts}
	t.in = newInbox(opts.logger(), t.postNoAnswer)
	t.life, t.stop = context.WithCancel(context.Background())
	return t
}

// Start ties the transport's life (its GET stream, the answers to the
// server's requests) to ctx as well as to Close.
func (t *Streamable) Start(ctx context.Context) error {
	stop := context.AfterFunc(ctx, t.stop)
	go func() {
		<-t.life.Done()
		stop()
	}()
	return nil
}

// SetNotificationHandler sets who gets the server's notifications.
func (t *Streamable) SetNotificationHandler(f func(jsonrpc.Message)) {
	t.in.setNotificationHandler(f)
}

// SetRequestHandler sets who answers the server's requests.
func (t *Streamable) SetRequestHandler(f jsonrpc.RequestHandler) { t.in.setRequestHandler(f) }

// SetProtocolVersion is the version initialize agreed on, sent with every
// later request as the spec asks.
func (t *Streamable) SetProtocolVersion(v string) {
	t.mu.Lock()
	t.protocol = v
	t.mu.Unlock()
}

// SetToolHeaders sets where a modern tools/call finds the arguments its
// tool's schema asks for as Mcp-Param-* headers (see [ToolParamHeaders]).
func (t *Streamable) SetToolHeaders(f func(tool string) []ParamHeader) {
	t.mu.Lock()
	t.toolHeaders = f
	t.mu.Unlock()
}

// SessionID is the session the server gave at initialize; "" when it
// gave none.
func (t *Streamable) SessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

// modern reports whether the version agreed on is 2026-07-28 or later,
// whose requests carry Mcp-Method and Mcp-Name, and the tool's headers.
func (t *Streamable) modern() (bool, func(string) []ParamHeader) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.protocol >= ModernVersion, t.toolHeaders
}

func (t *Streamable) header() map[string]string {
	h := make(map[string]string, len(t.opts.Header)+2)
	for k, v := range t.opts.Header {
		h[k] = v
	}
	t.mu.Lock()
	if t.session != "" {
		h[headerSession] = t.session
	}
	if t.protocol != "" {
		h[headerProtocol] = t.protocol
	}
	t.mu.Unlock()
	return h
}

// post sends one message: a request's or a notification's method and
// params, and its body. A 404 for a session that was set means the
// session ended, which ends the connection.
func (t *Streamable) post(ctx context.Context, method string, params, body []byte) (*http.Response, error) {
	if err := t.in.closedErr(); err != nil {
		return nil, err
	}
	h := t.header()
	req, err := newRequest(ctx, http.MethodPost, t.url, body, h)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if modern, tools := t.modern(); modern && method != "" {
		setRequestHeaders(req.Header, method, params, tools)
	}
	resp, err := t.opts.client().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound && h[headerSession] != "" {
		drain(resp)
		t.end(ErrSessionEnded)
		return nil, ErrSessionEnded
	}
	return resp, nil
}

// SendRequest POSTs the request and returns its answer, read from the
// JSON body or from the SSE stream the server opened for it (whose
// notifications and requests are delivered on the way).
func (t *Streamable) SendRequest(ctx context.Context, req jsonrpc.Message) (*jsonrpc.Message, error) {
	body, answer, done, err := t.in.expect(req)
	if err != nil {
		return nil, err
	}
	defer done()
	// The request ends with the transport too: a long answer's stream
	// must not outlive Close, or the server ending the session.
	callCtx := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.life, cancel)()
	res, err := t.roundTrip(ctx, req, body, answer)
	if err != nil && callCtx.Err() == nil {
		if why := t.in.closedErr(); why != nil {
			return nil, why
		}
	}
	return res, err
}

// roundTrip POSTs a request and returns its answer.
func (t *Streamable) roundTrip(ctx context.Context, req jsonrpc.Message, body []byte, answer <-chan *jsonrpc.Message) (*jsonrpc.Message, error) {
	resp, err := t.post(ctx, req.Method, req.Params, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if req.Method == string(mcp.MethodInitialize) {
		if id := resp.Header.Get(headerSession); id != "" {
			t.mu.Lock()
			t.session = id
			t.mu.Unlock()
		}
	}
	switch {
	case resp.StatusCode == http.StatusBadRequest && mediaType(resp) == "application/json":
		// A modern server refuses a request it cannot serve (an
		// unsupported version, headers that disagree with the body) with
		// a 400 whose body answers the request: that answer is the
		// error. Any other 400 is the transport's.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		t.in.deliver(t.life, b)
		select {
		case r, ok := <-answer:
			if ok {
				return r, nil
			}
		default:
		}
		return nil, statusErrorOf("POST "+req.Method, resp.StatusCode, b)
	case resp.StatusCode != http.StatusOK:
		return nil, statusError("POST "+req.Method, resp)
	case mediaType(resp) == "text/event-stream":
		if err := t.readStream(ctx, resp.Body, answer); err != nil {
			return nil, err
		}
	case mediaType(resp) == "application/json":
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("read the answer to %s: %w", req.Method, err)
		}
		t.in.deliver(t.life, b)
	default:
		return nil, fmt.Errorf("POST %s: the server answered with content type %q, not JSON or an event stream", req.Method, resp.Header.Get("Content-Type"))
	}
	select {
	case r, ok := <-answer:
		if !ok {
			return nil, t.in.closedErr()
		}
		return r, nil
	default:
		return nil, fmt.Errorf("POST %s: the server's answer carries no response to the request", req.Method)
	}
}

// readStream delivers the events of a POST's stream until the answer
// came (it is left in answer) or the stream ended without it. A stream
// that ended cleanly after giving an event ID is resumed with a GET
// carrying Last-Event-ID, after the reconnection time it asked for: a
// server may end a long request's stream and keep its answer for the
// client to collect that way (2025-11-25, "resumability"). A stream that
// broke off fails the request.
func (t *Streamable) readStream(ctx context.Context, body io.Reader, answer <-chan *jsonrpc.Message) error {
	er := newEventReader(body)
	var resumed io.Closer
	defer func() {
		if resumed != nil {
			resumed.Close()
		}
	}()
	for {
		err := t.deliverUntil(ctx, er, answer)
		switch {
		case err == nil || ctx.Err() != nil:
			return err
		case !errors.Is(err, io.EOF):
			return fmt.Errorf("read the event stream: %w", err)
		case er.lastID == "":
			return errors.New("the server ended the event stream before it answered")
		}
		wait := defaultReconnect
		if er.retry > 0 {
			wait = max(er.retry, minReconnect)
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		next, err := t.resume(ctx, er.lastID)
		if err != nil {
			return fmt.Errorf("resume the event stream after event %q: %w", er.lastID, err)
		}
		if resumed != nil {
			resumed.Close()
		}
		resumed = next
		er.r.Reset(next) // the event ID and reconnection time carry on
	}
}

// Reconnection times of a resumed stream: when the server gave none, and
// the least taken from it, so that "retry: 0" cannot make a busy loop.
const (
	defaultReconnect = time.Second
	minReconnect     = 10 * time.Millisecond
)

// deliverUntil delivers er's events until the answer came (nil) or the
// stream ended (its error; io.EOF when it ended cleanly).
func (t *Streamable) deliverUntil(ctx context.Context, er *eventReader, answer <-chan *jsonrpc.Message) error {
	for {
		ev, err := er.next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if len(answer) > 0 {
				return nil
			}
			return err
		}
		if ev.name != "message" {
			continue
		}
		t.in.deliver(t.life, ev.data)
		if len(answer) > 0 {
			return nil
		}
	}
}

// resume opens the GET that carries on a stream from the event after
// lastID.
func (t *Streamable) resume(ctx context.Context, lastID string) (io.ReadCloser, error) {
	req, err := newRequest(ctx, http.MethodGet, t.url, nil, t.header())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := t.opts.client().Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode != http.StatusOK:
		return nil, statusError("GET", resp)
	case mediaType(resp) != "text/event-stream":
		drain(resp)
		return nil, fmt.Errorf("the server answered with content type %q, not an event stream", resp.Header.Get("Content-Type"))
	}
	return resp.Body, nil
}

// SendNotification POSTs a notification. The initialized notification
// also opens the GET stream, with Options.Listen: the session is set up
// by then.
func (t *Streamable) SendNotification(ctx context.Context, n jsonrpc.Message) error {
	body, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s: %w", n.Method, err)
	}
	if err := t.postMessage(ctx, "POST "+n.Method, n.Method, body); err != nil {
		return err
	}
	if n.Method == string(mcp.MethodNotificationInitialized) && t.opts.Listen {
		t.listen.Do(func() {
			t.wg.Add(1)
			go t.listenLoop()
		})
	}
	return nil
}

// postNoAnswer POSTs a message that gets no answer: the server says 202
// (or, leniently, 200 with nothing that matters in the body).
func (t *Streamable) postNoAnswer(ctx context.Context, what string, body []byte) error {
	return t.postMessage(ctx, what, "", body)
}

// postMessage is postNoAnswer for a message whose method is known: a
// modern server is told it in Mcp-Method.
func (t *Streamable) postMessage(ctx context.Context, what, method string, body []byte) error {
	resp, err := t.post(ctx, method, nil, body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return statusError(what, resp)
	}
	drain(resp)
	return nil
}

// Close ends the session: the GET stream is closed, requests waiting
// fail, and the server is told with a DELETE (which it may refuse).
func (t *Streamable) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.lost.Do(func() {}) // OnLost is for ends mcpx did not ask for
	t.in.close(jsonrpc.ErrClosed)
	t.stop()
	t.wg.Wait()
	if t.SessionID() == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	req, err := newRequest(ctx, http.MethodDelete, t.url, nil, t.header())
	if err != nil {
		return err
	}
	resp, err := t.opts.client().Do(req)
	if err != nil {
		return fmt.Errorf("end the session: %w", err)
	}
	drain(resp)
	return nil
}

// end ends the connection for a reason of the server's.
func (t *Streamable) end(err error) {
	t.in.close(err)
	t.stop()
	t.lost.Do(func() {
		if t.opts.OnLost != nil {
			go t.opts.OnLost(err)
		}
	})
}
