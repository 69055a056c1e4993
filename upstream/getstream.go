package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"log/slog"
)

// getStream watches the GET stream of a streamable HTTP server, on which
// the server sends notifications nobody asked for (list_changed, ...).
//
// The transport (remote.Streamable) opens that stream and tries again
// when it fails; getStream is the HTTP client under it: a GET that follows
// a failure first waits a backoff (doubling from MinBackoff up to
// MaxBackoff), and the stream's state is logged once per change instead
// of once per attempt. A 405 answer means the server has no stream, which
// the spec allows: it is noted at debug level, not reported as an error.
type getStream struct {
	base     http.RoundTripper
	log      *slog.Logger
	min, max time.Duration

	mu       sync.Mutex
	state    string // "", "open", "failing" or "none"
	failures int    // attempts in a row that failed or ended at once
}

// streamMinLife is how long a stream must stay open to count as working:
// one that a server accepts and closes at once is retried with backoff
// too.
const streamMinLife = 10 * time.Second

func newGETStream(base http.RoundTripper, logger *slog.Logger, min, max time.Duration) *getStream {
	return &getStream{base: base, log: logger, min: min, max: max}
}

func (g *getStream) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return g.base.RoundTrip(req)
	}
	if d := g.delay(); d > 0 {
		g.log.Debug("GET stream: next attempt after backoff", "in", d)
		if err := sleepCtx(req.Context(), d); err != nil {
			return nil, err
		}
	}
	resp, err := g.base.RoundTrip(req)
	switch {
	case err != nil:
		g.failed(err.Error())
	case resp.StatusCode == http.StatusMethodNotAllowed:
		g.none()
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted:
		g.opened()
		resp.Body = &streamBody{ReadCloser: resp.Body, g: g, opened: time.Now()}
	default:
		g.failed(fmt.Sprintf("HTTP status %d", resp.StatusCode))
	}
	return resp, err
}

// delay is the backoff before the next GET: none while the stream works.
func (g *getStream) delay() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failures == 0 || g.state == "none" {
		return 0
	}
	d := g.min
	for i := 1; i < g.failures && d < g.max; i++ {
		d *= 2
	}
	return min(d, g.max)
}

func (g *getStream) failed(why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures++
	if g.state != "failing" {
		g.state = "failing"
		g.log.Warn("GET stream for server notifications failed; retrying with backoff", "err", why)
		return
	}
	g.log.Debug("GET stream failed again", "err", why, "attempts", g.failures)
}

func (g *getStream) opened() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == "failing" {
		g.log.Info("GET stream for server notifications open again")
	} else {
		g.log.Debug("GET stream for server notifications open")
	}
	g.state = "open"
}

func (g *getStream) none() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != "none" {
		g.log.Debug("the server has no GET stream (405): its notifications come only with responses")
	}
	g.state = "none"
}

// ended records the end of a stream that was open.
func (g *getStream) ended(lived time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if lived >= streamMinLife {
		g.failures = 0
		return
	}
	g.failures++
}

// streamBody reports when an open stream ends.
type streamBody struct {
	io.ReadCloser
	g      *getStream
	opened time.Time
	once   sync.Once
}

func (b *streamBody) Close() error {
	b.once.Do(func() { b.g.ended(time.Since(b.opened)) })
	return b.ReadCloser.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
