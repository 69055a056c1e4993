package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/mcpx/mcpx/jsonrpc"
)

// SSE is a client of the HTTP+SSE transport of protocol 2024-11-05: one
// long GET stream carries everything the server sends, starting with an
// "endpoint" event that says where to POST messages.
type SSE struct {
	url  string
	opts Options
	in   *inbox

	life context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
	lost sync.Once

	endpoint string // set by Start
}

// NewSSE returns the transport to the server whose stream is at url.
func NewSSE(url string, opts Options) *SSE {
	t := &SSE{url: url, opts: opts}
	t.in = newInbox(opts.logger(), t.post)
	return t
}

// Start opens the stream and waits, within ctx, for the endpoint event.
// The stream lives until Close or until ctx ends.
func (t *SSE) Start(ctx context.Context) error {
	t.life, t.stop = context.WithCancel(ctx)
	req, err := newRequest(t.life, http.MethodGet, t.url, nil, t.opts.Header)
	if err != nil {
		t.stop()
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := t.opts.streamClient().Do(req)
	if err != nil {
		t.stop()
		return err
	}
	if resp.StatusCode != http.StatusOK {
		t.stop()
		return statusError("GET", resp)
	}
	if mediaType(resp) != "text/event-stream" {
		drain(resp)
		t.stop()
		return fmt.Errorf("GET %s: the server answered with content type %q, not an event stream", t.url, resp.Header.Get("Content-Type"))
	}
	er := newEventReader(resp.Body)
	endpoint, err := t.awaitEndpoint(er)
	if err != nil {
		resp.Body.Close()
		t.stop()
		return err
	}
	t.endpoint = endpoint
	t.wg.Add(1)
	go t.read(er, resp.Body)
	return nil
}

// awaitEndpoint reads up to the endpoint event and returns the absolute
// URL it names, which must be on the stream's own origin: the POSTs carry
// the same headers (and token) as the stream.
func (t *SSE) awaitEndpoint(er *eventReader) (string, error) {
	for {
		ev, err := er.next()
		if err != nil {
			if t.life.Err() != nil {
				return "", t.life.Err()
			}
			return "", fmt.Errorf("the SSE stream ended before its endpoint event: %w", err)
		}
		if ev.name != "endpoint" {
			continue
		}
		base, err := url.Parse(t.url)
		if err != nil {
			return "", err
		}
		ref, err := url.Parse(string(ev.data))
		if err != nil {
			return "", fmt.Errorf("the SSE endpoint event is not a URL: %q", ev.data)
		}
		u := base.ResolveReference(ref)
		if u.Scheme != base.Scheme || u.Host != base.Host {
			return "", fmt.Errorf("the SSE endpoint event points to another origin (%s://%s), which mcpx does not follow", u.Scheme, u.Host)
		}
		return u.String(), nil
	}
}

// read delivers the stream's messages until it ends, which ends the
// connection.
func (t *SSE) read(er *eventReader, body io.Closer) {
	defer t.wg.Done()
	defer body.Close()
	for {
		ev, err := er.next()
		if err != nil {
			if t.life.Err() != nil {
				err = jsonrpc.ErrClosed
			} else if errors.Is(err, io.EOF) {
				err = errors.New("the server ended the SSE stream")
			} else {
				err = fmt.Errorf("the SSE stream broke: %w", err)
			}
			t.end(err)
			return
		}
		if ev.name == "message" {
			t.in.deliver(t.life, ev.data)
		}
	}
}

// SetNotificationHandler sets who gets the server's notifications.
func (t *SSE) SetNotificationHandler(f func(jsonrpc.Message)) {
	t.in.setNotificationHandler(f)
}

// SetRequestHandler sets who answers the server's requests.
func (t *SSE) SetRequestHandler(f jsonrpc.RequestHandler) { t.in.setRequestHandler(f) }

// SendRequest POSTs the request and waits for its answer on the stream.
func (t *SSE) SendRequest(ctx context.Context, req jsonrpc.Message) (*jsonrpc.Message, error) {
	body, answer, done, err := t.in.expect(req)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := t.post(ctx, "POST "+req.Method, body); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-answer:
		if !ok {
			return nil, t.in.closedErr()
		}
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// SendNotification POSTs a notification.
func (t *SSE) SendNotification(ctx context.Context, n jsonrpc.Message) error {
	body, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s: %w", n.Method, err)
	}
	return t.post(ctx, "POST "+n.Method, body)
}

// post sends one message to the endpoint; the server accepts it with any
// 2xx and answers, if at all, on the stream.
func (t *SSE) post(ctx context.Context, what string, body []byte) error {
	if err := t.in.closedErr(); err != nil {
		return err
	}
	if t.endpoint == "" {
		return errors.New("the SSE transport is not started")
	}
	req, err := newRequest(ctx, http.MethodPost, t.endpoint, body, t.opts.Header)
	if err != nil {
		return err
	}
	resp, err := t.opts.client().Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return statusError(what, resp)
	}
	drain(resp)
	return nil
}

// Close ends the stream; requests waiting fail.
func (t *SSE) Close() error {
	t.lost.Do(func() {}) // OnLost is for ends mcpx did not ask for
	t.in.close(jsonrpc.ErrClosed)
	if t.stop != nil {
		t.stop()
	}
	t.wg.Wait()
	return nil
}

func (t *SSE) end(err error) {
	t.in.close(err)
	t.lost.Do(func() {
		if t.opts.OnLost != nil {
			go t.opts.OnLost(err)
		}
	})
}
