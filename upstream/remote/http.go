package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Options configure a remote transport.
type Options struct {
	// Client sends the messages (POST) and ends the session (DELETE). Its
	// transport is where authentication and size limits go. Nil means
	// http.DefaultClient.
	Client *http.Client
	// StreamClient opens the long-lived streams: the SSE stream of
	// [SSE], the GET stream of [Streamable]. Nil means Client.
	// Retries of the GET stream are paced by it (a failed attempt is
	// tried again after retryPause only).
	StreamClient *http.Client
	// Header is sent with every request.
	Header map[string]string
	// Listen opens the GET stream of a [Streamable] transport once the
	// session is initialized, for what the server sends unasked.
	Listen bool
	// OnLost is told, once, when the connection ends without Close: the
	// SSE stream ended, or the server ended the session.
	OnLost func(error)
	// Logger takes debug lines; nil discards them.
	Logger *slog.Logger
}

func (o *Options) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return http.DefaultClient
}

func (o *Options) streamClient() *http.Client {
	if o.StreamClient != nil {
		return o.StreamClient
	}
	return o.client()
}

func (o *Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// retryPause is the least time between two attempts at a stream, so that
// a client that does not pace them cannot make a busy loop.
const retryPause = 100 * time.Millisecond

// closeTimeout bounds the DELETE that ends a session.
const closeTimeout = 2 * time.Second

// StatusError is an HTTP answer that is not the one expected.
type StatusError struct {
	Method string
	Status int
	Body   string // the start of the body, for the reader
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d %s", e.Method, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// statusError reads the start of resp's body into a StatusError and
// closes it.
func statusError(method string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	drain(resp)
	return statusErrorOf(method, resp.StatusCode, b)
}

// statusErrorOf is the StatusError of an answer whose body was read.
func statusErrorOf(method string, status int, b []byte) error {
	body := strings.Join(strings.Fields(string(b[:min(len(b), 512)])), " ")
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	return &StatusError{Method: method, Status: status, Body: body}
}

// drain reads a little of what is left of the body, so the connection
// can be reused, and closes it.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func newRequest(ctx context.Context, method, url string, body []byte, header map[string]string) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// mediaType is the content type without parameters, lower case.
func mediaType(resp *http.Response) string {
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
