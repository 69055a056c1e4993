package aggregator

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// within fails the test unless done is closed before a generous watchdog.
func within(t testing.TB, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after 30s", what)
	}
}

// TestServeSlowClientNeverStallsUpstreams: while the client reads
// nothing, notifications relayed from an upstream's reader never wait
// (they are dropped, with a log line), and the answer to a call made
// meanwhile is not lost: it arrives once the client reads again.
func TestServeSlowClientNeverStallsUpstreams(t *testing.T) {
	logs := &testenv.Buffer{}
	alpha, beta := twoSources(t)
	alpha.setRequest(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":"answered"}]}`), nil
	})
	c := serveWith(t, &Options{Logger: slog.New(log.New(logs))}, mem(alpha, "alpha"), mem(beta, ""))
	c.initialize()
	c.sync()

	c.gate.stop()
	c.request(7, "tools/call", map[string]any{"name": "alpha_echo"})
	const flood = 5000
	done := make(chan struct{})
	go func() {
		defer close(done)
		params := json.RawMessage(`{"level":"info","data":"` + strings.Repeat("n", 1000) + `"}`)
		for range flood {
			// What an upstream's reader calls for each log message.
			c.a.serverNotification("alpha", "notifications/message", params)
		}
	}()
	within(t, done, "relaying notifications to a client that does not read")
	if !strings.Contains(logs.String(), "dropping notifications") {
		t.Errorf("no log line about dropped notifications:\n%s", logs.String())
	}

	c.gate.resume()
	r := c.await(7, 30*time.Second)
	if r.Error != nil || !strings.Contains(string(r.Result), "answered") {
		t.Errorf("the answer to the call made during the stall: %s", r.line)
	}
	c.sync()
	if n := c.noteCount(); n >= flood || n == 0 {
		t.Errorf("the client got %d of %d notifications; want some, the rest dropped", n, flood)
	}
	if !strings.Contains(logs.String(), "the client is reading again") {
		// Written when the next notification gets through.
		c.a.serverNotification("alpha", "notifications/message", json.RawMessage(`{"level":"info","data":"x"}`))
		if !strings.Contains(logs.String(), "dropped_notifications") {
			t.Errorf("no log line counting the dropped notifications:\n%s", logs.String())
		}
	}
}

// TestServeEOFWithStuckCallAndClient: the client closes its input while
// a source ignores cancellation and the client has stopped reading:
// ServeStdio still returns, within its drain bounds.
func TestServeEOFWithStuckCallAndClient(t *testing.T) {
	alpha, beta := twoSources(t)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	alpha.setRequest(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-release // deaf to cancellation
		return nil, nil
	})
	c := serveWith(t, &Options{Drain: 100 * time.Millisecond}, mem(alpha, "alpha"), mem(beta, ""))
	c.initialize()
	c.request(1, "tools/call", map[string]any{"name": "alpha_echo"})
	<-started
	c.mu.Lock()
	c.mayCutLast = true // the drain gives up mid-line on a client that stopped reading
	c.mu.Unlock()
	c.gate.stop()
	// Fill the pipe and the queue: answers to pings wait for the client.
	for i := range core.QueueLen + 10 {
		c.request(i+100, "ping", nil)
	}
	c.in.Close()
	done := make(chan struct{})
	go func() {
		<-c.done
		close(done)
	}()
	within(t, done, "ServeStdio after EOF")
}

// TestServeMaxMessageBytes: a request over the limit gets an error naming
// the size and the limit, a notification over it is dropped with a log
// line, an answer over it becomes an error, and the session goes on.
func TestServeMaxMessageBytes(t *testing.T) {
	logs := &testenv.Buffer{}
	alpha, beta := twoSources(t)
	alpha.setRequest(func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		text, _ := json.Marshal(strings.Repeat("r", 20000))
		return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`), nil
	})
	cfg := &config.Config{Separator: "_", Expose: config.ExposeDirect, MaxMessageBytes: 8 << 10}
	c := serveConfig(t, cfg, &Options{Logger: slog.New(log.New(logs))}, mem(alpha, "alpha"), mem(beta, ""))
	c.initialize()

	big := strings.Repeat("x", 100000)
	// The id comes last, as the TypeScript SDK writes it.
	c.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"m":"` + big + `"}},"id":"late"}`)
	r := c.await("late", 5*time.Second)
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "over the limit of 8 KiB") ||
		!strings.Contains(r.Error.Message, "97.8 KiB") {
		t.Errorf("over-long request: %s", r.line)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`)
	c.sync()
	if !strings.Contains(logs.String(), "dropped a message from the client") {
		t.Errorf("no log line for the dropped notification:\n%s", logs.String())
	}
	r = c.call(2, "tools/call", map[string]any{"name": "alpha_echo"})
	if r.Error == nil || !strings.Contains(r.Error.Message, "too large to send") || !strings.Contains(r.Error.Message, "8 KiB") {
		t.Errorf("over-long answer: %s", r.line)
	}
	if r := c.call(3, "ping", nil); r.Error != nil {
		t.Errorf("ping after it all: %s", r.line)
	}
}

// TestServeTimeoutIsRPCError: a call that ran out of time is a JSON-RPC
// error naming the server, the tool and the limit; through the proxy it
// is an isError result that says the same.
func TestServeTimeoutIsRPCError(t *testing.T) {
	alpha, beta := twoSources(t)
	timeout := &upstream.TimeoutError{Server: "alpha", Method: "tools/call", Target: "echo",
		Limit: upstream.LimitCallTimeout, After: time.Second}
	alpha.setRequest(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, timeout
	})
	c := serveConfig(t, &config.Config{Separator: "_", Expose: config.ExposeBoth}, nil, mem(alpha, "alpha"), mem(beta, ""))
	c.initialize()
	r := c.call(1, "tools/call", map[string]any{"name": "alpha_echo"})
	if r.Error == nil || r.Error.Code != codeRequestTimeout || r.Error.Message != timeout.Error() {
		t.Errorf("direct call: %s", r.line)
	}
	r = c.call(2, "tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{
		"action": "call", "type": "tool", "path": "alpha_echo"}})
	var res struct {
		IsError bool
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || !res.IsError || len(res.Content) != 1 ||
		!strings.Contains(res.Content[0].Text, `server "alpha": tools/call "echo" timed out`) ||
		!strings.Contains(res.Content[0].Text, "callTimeout 1s") {
		t.Errorf("proxy call: %s", r.line)
	}
}

// TestServeGarbageFromClientThatDoesNotRead: error answers to a client
// that sends garbage and reads nothing never stop mcpx reading its input,
// so EOF still ends ServeStdio.
func TestServeGarbageFromClientThatDoesNotRead(t *testing.T) {
	alpha, beta := twoSources(t)
	c := serveWith(t, &Options{Drain: 100 * time.Millisecond}, mem(alpha, "alpha"), mem(beta, ""))
	c.initialize()
	c.mu.Lock()
	c.mayCutLast = true // the drain gives up mid-line on a client that stopped reading
	c.mu.Unlock()
	c.gate.stop()
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for range 2000 {
			c.send(`not json at all`)
		}
		c.in.Close()
	}()
	within(t, sent, "writing garbage to mcpx")
	done := make(chan struct{})
	go func() {
		<-c.done
		close(done)
	}()
	within(t, done, "ServeStdio after EOF")
}
