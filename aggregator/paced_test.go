package aggregator

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
)

// pacedPipe is a client's end that records the choice the read loop
// gives it, as nbpipe.Reader would take it.
type pacedPipe struct {
	io.Reader
	mu   sync.Mutex
	poll func() bool
}

func (p *pacedPipe) PollWhen(poll func() bool) {
	p.mu.Lock()
	p.poll = poll
	p.mu.Unlock()
}

func (p *pacedPipe) polling() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.poll != nil && p.poll()
}

// TestServeWaitsInPollerWhileAnswering: the read loop has its stdin
// wait in the poller while more than one request is in flight, and
// blocked in read(2) otherwise: for a client that waits for each answer,
// and once the answers are out.
func TestServeWaitsInPollerWhileAnswering(t *testing.T) {
	alpha, beta := twoSources(t)
	release := make(chan struct{})
	alpha.setRequest(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		select {
		case <-release:
			return json.RawMessage(`{"content":[]}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	beta.setRequest(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	})
	a := New(&config.Config{Separator: "_", Expose: config.ExposeDirect}, nil)
	a.members = []*member{mem(alpha, "alpha"), mem(beta, "")}
	a.Rebuild()
	close(a.ready)
	in := &pacedPipe{}
	c := serveReading(t, a, func(r io.Reader) io.Reader { in.Reader = r; return in })
	c.initialize()
	if in.polling() {
		t.Error("polls with nothing in flight")
	}

	c.call("one", "tools/call", map[string]any{"name": "echo"})
	c.request("held", "tools/call", map[string]any{"name": "alpha_echo"})
	waitReceived(t, alpha, 1)
	if in.polling() {
		t.Error("polls with one request in flight: a client that waits for it reads quickest blocked")
	}
	c.request("held2", "tools/call", map[string]any{"name": "alpha_echo"})
	waitReceived(t, alpha, 2)
	if !in.polling() {
		t.Error("reads blocked with two requests in flight")
	}
	close(release)
	c.await("held", 10*time.Second)
	c.await("held2", 10*time.Second)
	c.sync()
	if in.polling() {
		t.Error("still polls once every answer is out")
	}
}

// waitReceived waits until src has received n requests.
func waitReceived(t *testing.T, src *fakeSource, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(src.received()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s received %d requests, want %d", src.name, len(src.received()), n)
		}
		time.Sleep(time.Millisecond)
	}
}
