package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// client sends one signal's export requests, with the retries OTLP asks
// for (throttled or unavailable collectors) until a minute has passed or
// the caller's context ends.
type client struct {
	cfg    Config
	http   *http.Client
	url    string
	stop   chan struct{} // closed by close: retries end
	closed sync.Once
	wait   time.Duration // the first retry's delay
}

// The retry's backoff, as OpenTelemetry's exporters make it.
const (
	retryInitial = 5 * time.Second
	retryMax     = 30 * time.Second
	retryElapsed = time.Minute
	maxResponse  = 64 << 10 // of a response read
)

func newClient(cfg Config) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS
	}
	u := *cfg.URL
	if cfg.Protocol == ProtocolGRPC {
		var p http.Protocols
		if u.Scheme == "http" {
			p.SetUnencryptedHTTP2(true) // gRPC without TLS: HTTP/2 with prior knowledge
		} else {
			p.SetHTTP2(true)
		}
		tr.Protocols = &p
		u.Path = service(cfg.Signal) + "/Export"
		u.RawQuery = ""
	}
	return &client{cfg: cfg, http: &http.Client{Transport: tr}, url: u.String(), stop: make(chan struct{}), wait: retryInitial}
}

// service is the path of a signal's gRPC service.
func service(s Signal) string {
	if s == SignalMetrics {
		return "/opentelemetry.proto.collector.metrics.v1.MetricsService"
	}
	return "/opentelemetry.proto.collector.trace.v1.TraceService"
}

// close ends the retries under way and the idle connections.
func (c *client) close() {
	c.closed.Do(func() {
		close(c.stop)
		c.http.CloseIdleConnections()
	})
}

// retryable is a failure worth another attempt, after at least after.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// send exports msg, an encoded export request, and returns what the
// collector said it rejected ("" when nothing).
func (c *client) send(ctx context.Context, msg []byte) (rejected string, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	body := msg
	if c.cfg.Gzip {
		var b bytes.Buffer
		gz := gzip.NewWriter(&b)
		gz.Write(msg)
		gz.Close()
		body = b.Bytes()
	}
	start := time.Now()
	wait := c.wait
	for {
		rejected, err = c.attempt(ctx, body)
		var r *retryable
		if err == nil || !errors.As(err, &r) {
			return rejected, err
		}
		d := max(wait, r.after)
		if time.Since(start)+d > retryElapsed {
			return "", r.err
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", errors.Join(r.err, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*3/2, retryMax)
	}
}

// attempt makes one request.
func (c *client) attempt(ctx context.Context, body []byte) (string, error) {
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	if c.cfg.Protocol == ProtocolGRPC {
		return c.grpc(ctx, body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	c.header(req)
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, data, err := c.roundTrip(req)
	if err != nil {
		return "", err
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		if resp.Header.Get("Content-Type") != "application/x-protobuf" {
			return "", nil
		}
		return partialSuccess(data), nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		return "", &retryable{err: c.statusError(resp.Status, data), after: retryAfter(resp.Header.Get("Retry-After"))}
	}
	return "", c.statusError(resp.Status, data)
}

func (c *client) header(req *http.Request) {
	req.Header.Set("User-Agent", "mcpx OTLP exporter")
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
}

func (c *client) statusError(status string, body []byte) error {
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" || !isText(text) {
		text = "(no text)"
	}
	return fmt.Errorf("OTLP export to %s: %s: %s", c.url, status, text)
}

func isText(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0xfffd {
			return false
		}
	}
	return true
}

// netError makes a timeout worth another attempt, as the exporters do.
func netError(err error) error {
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ue) && errors.As(err, &ne) && ne.Timeout() {
		return &retryable{err: err}
	}
	return err
}

// retryAfter is a Retry-After header's delay in seconds; 0 when absent.
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// grpc makes the export as one unary gRPC call over HTTP/2.
func (c *client) grpc(ctx context.Context, body []byte) (string, error) {
	frame := make([]byte, 5, 5+len(body))
	if c.cfg.Gzip {
		frame[0] = 1
	}
	binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
	frame = append(frame, body...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(frame))
	if err != nil {
		return "", err
	}
	c.header(req)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	if c.cfg.Gzip {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	if d, ok := ctx.Deadline(); ok {
		req.Header.Set("Grpc-Timeout", strconv.FormatInt(max(time.Until(d).Milliseconds(), 1), 10)+"m")
	}
	resp, data, err := c.roundTrip(req)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		err := c.statusError(resp.Status, data)
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			return "", &retryable{err: err}
		}
		return "", err
	}
	status := resp.Trailer.Get("Grpc-Status")
	message := resp.Trailer.Get("Grpc-Message")
	if status == "" { // a trailers-only answer
		status, message = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	code, _ := strconv.Atoi(status)
	if status == "" {
		return "", fmt.Errorf("OTLP export to %s: no grpc-status in the answer", c.url)
	}
	if code != 0 {
		if m, err := url.PathUnescape(message); err == nil {
			message = m
		}
		err := fmt.Errorf("OTLP export to %s: gRPC status %d: %s", c.url, code, message)
		switch code {
		case 1, 4, 10, 11, 14, 15: // canceled, deadline exceeded, aborted, out of range, unavailable, data loss
			return "", &retryable{err: err}
		}
		return "", err
	}
	if len(data) < 5 {
		return "", nil
	}
	msg := data[5:]
	if data[0] == 1 && strings.EqualFold(resp.Header.Get("Grpc-Encoding"), "gzip") {
		gz, err := gzip.NewReader(bytes.NewReader(msg))
		if err != nil {
			return "", nil
		}
		if msg, err = io.ReadAll(io.LimitReader(gz, maxResponse)); err != nil {
			return "", nil
		}
	}
	return partialSuccess(msg), nil
}

// partialSuccess reads an export response's partial_success (field 1:
// {rejected = 1; error_message = 2}) and says what was rejected; "" for
// nothing, or for a response it cannot read.
func partialSuccess(resp []byte) string {
	var rejected int64
	var message string
	for f, v := range fields(resp) {
		if f.num != 1 || f.wire != wireBytes {
			continue
		}
		for g, w := range fields(v) {
			switch {
			case g.num == 1 && g.wire == wireVarint:
				rejected = int64(g.varint)
			case g.num == 2 && g.wire == wireBytes:
				message = string(w)
			}
		}
	}
	if rejected == 0 && message == "" {
		return ""
	}
	return fmt.Sprintf("%d rejected: %s", rejected, message)
}

// field is a field read by fields: its number, wire type and, for a
// varint, its value.
type field struct {
	num, wire int
	varint    uint64
}

// fields iterates over a message's fields, yielding each with its bytes
// (a length-delimited field's content); it stops at the first it cannot
// read.
func fields(b []byte) func(func(field, []byte) bool) {
	return func(yield func(field, []byte) bool) {
		for len(b) > 0 {
			tag, n := binary.Uvarint(b)
			if n <= 0 {
				return
			}
			b = b[n:]
			f := field{num: int(tag >> 3), wire: int(tag & 7)}
			var v []byte
			switch f.wire {
			case wireVarint:
				x, n := binary.Uvarint(b)
				if n <= 0 {
					return
				}
				f.varint, b = x, b[n:]
			case wire64:
				if len(b) < 8 {
					return
				}
				v, b = b[:8], b[8:]
			case wire32:
				if len(b) < 4 {
					return
				}
				v, b = b[:4], b[4:]
			case wireBytes:
				l, n := binary.Uvarint(b)
				if n <= 0 || uint64(len(b)-n) < l {
					return
				}
				v, b = b[n:n+int(l)], b[n+int(l):]
			default:
				return
			}
			if !yield(f, v) {
				return
			}
		}
	}
}

// roundTrip sends req and reads the answer's body, at most maxResponse
// bytes of it; a failure of either is a netError.
func (c *client) roundTrip(req *http.Request) (*http.Response, []byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, netError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, nil, netError(err)
	}
	return resp, data, nil
}
