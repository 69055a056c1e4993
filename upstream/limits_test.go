package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// TestCallTimeout: a tool that never answers ends with an error naming
// the server, the tool and the limit, and the server hears that the
// request was cancelled.
func TestCallTimeout(t *testing.T) {
	t.Parallel()
	var buf testenv.Buffer
	opts := fastOptions()
	opts.Logger = slog.New(log.New(&buf))
	srv := stdioServer("hung")
	srv.CallTimeout = 300 * time.Millisecond
	c := connect(t, srv, opts)

	_, err := callTool(t, c, "sleep", map[string]any{"ms": 600000})
	var te *upstream.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a *TimeoutError", err)
	}
	if te.Limit != upstream.LimitCallTimeout || te.Server != "hung" || te.Target != "sleep" {
		t.Errorf("TimeoutError %+v", te)
	}
	for _, want := range []string{`server "hung"`, `tools/call "sleep"`, "callTimeout 300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return strings.Contains(buf.String(), "timed out (callTimeout 300ms)") },
		"the server did not log the cancellation:\n%s", buf.String())
	if got := mustCallText(t, c, "echo", map[string]any{"message": "still here"}); got != "still here" {
		t.Errorf("echo after the timeout = %q", got)
	}
}

// TestCallTimeoutProgress: progress keeps a call alive past its
// callTimeout, even when the caller asked for none; maxCallTime caps it.
func TestCallTimeoutProgress(t *testing.T) {
	t.Parallel()
	srv := stdioServer("ticking")
	srv.CallTimeout = time.Second
	c := connect(t, srv, nil)
	// 30 progress notifications, 100ms apart: 3s in all, 3x the limit.
	long := map[string]any{"ms": 3000, "steps": 30}
	if got := mustCallText(t, c, "sleep", long); got != "slept 3000ms" {
		t.Errorf("sleep = %q", got)
	}

	// With the caller's own token its progress is still relayed.
	var mu sync.Mutex
	var tokens []string
	opts := &upstream.CallOptions{Progress: func(p json.RawMessage) {
		var v struct{ ProgressToken string }
		json.Unmarshal(p, &v)
		mu.Lock()
		tokens = append(tokens, v.ProgressToken)
		mu.Unlock()
	}}
	params := json.RawMessage(`{"name":"sleep","arguments":{"ms":1500,"steps":15},"_meta":{"progressToken":"mine"}}`)
	if _, err := c.RequestWith(context.Background(), "tools/call", params, opts); err != nil {
		t.Fatalf("sleep with progress: %v", err)
	}
	mu.Lock()
	if len(tokens) != 15 || tokens[0] != "mine" {
		t.Errorf("relayed progress tokens %q, want 15 times \"mine\"", tokens)
	}
	mu.Unlock()

	capped := stdioServer("capped")
	capped.CallTimeout = time.Second
	capped.MaxCallTime = 1500 * time.Millisecond
	c2 := connect(t, capped, nil)
	_, err := callTool(t, c2, "sleep", map[string]any{"ms": 6000, "steps": 60})
	var te *upstream.TimeoutError
	if !errors.As(err, &te) || te.Limit != upstream.LimitMaxCallTime || !strings.Contains(err.Error(), "maxCallTime 1.5s") {
		t.Errorf("err = %v, want a maxCallTime timeout", err)
	}
}

// TestMaxConcurrent: no more than maxConcurrent calls reach the server
// at once; the others wait their turn, their callTimeout running.
func TestMaxConcurrent(t *testing.T) {
	t.Parallel()
	srv := stdioServer("narrow", "--limit-tools")
	srv.MaxConcurrent = 2
	c := connect(t, srv, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := mustCallText(t, c, "sleep", map[string]any{"ms": 100}); got != "slept 100ms" {
				t.Errorf("sleep = %q", got)
			}
		})
	}
	wg.Wait()
	stats := mustCallText(t, c, "stats", nil)
	if stats != `{"active":0,"peak":2}` {
		t.Errorf("server stats %s, want a peak of 2 calls at once", stats)
	}

	one := stdioServer("single", "--limit-tools")
	one.MaxConcurrent = 1
	one.CallTimeout = 500 * time.Millisecond
	c1 := connect(t, one, nil)
	busy := make(chan error, 1)
	running := make(chan struct{}, 100)
	go func() {
		// Alive through progress, and holding the only slot for 3s.
		opts := &upstream.CallOptions{Progress: func(json.RawMessage) { running <- struct{}{} }}
		_, err := c1.RequestWith(context.Background(), "tools/call",
			json.RawMessage(`{"name":"sleep","arguments":{"ms":3000,"steps":60},"_meta":{"progressToken":1}}`), opts)
		busy <- err
	}()
	select {
	case <-running: // the first progress: the call holds the slot
	case <-time.After(10 * time.Second):
		t.Fatal("the first call never reported progress")
	}
	_, err := callTool(t, c1, "echo", map[string]any{"message": "queued"})
	var te *upstream.TimeoutError
	if !errors.As(err, &te) || te.Limit != upstream.LimitCallTimeout {
		t.Errorf("queued call: err = %v, want a callTimeout while waiting", err)
	}
	if err := <-busy; err != nil {
		t.Errorf("the call holding the slot: %v", err)
	}
}

// send is Client.Send made synchronous for a test: it fails the test when
// Send will not take the request.
func send(t *testing.T, c *upstream.Client, ctx context.Context, tool string, args string) <-chan error {
	t.Helper()
	ch, _ := sendCancelable(t, c, ctx, tool, args)
	return ch
}

// sendCancelable is send that also returns the call's cancel.
func sendCancelable(t *testing.T, c *upstream.Client, ctx context.Context, tool string, args string) (<-chan error, func(error)) {
	t.Helper()
	ch := make(chan error, 1)
	params := json.RawMessage(`{"name":"` + tool + `","arguments":` + args + `}`)
	cancel, ok := c.Send(ctx, "tools/call", params, nil, func(_ json.RawMessage, err error) { ch <- err })
	if !ok {
		t.Fatalf("Send refused a call to a connected stdio server")
	}
	return ch, cancel
}

// TestSendCancel: the cancel Send returns ends a call whose context never
// ends, as the serving loop's calls are: in line, the call is withdrawn
// without reaching the server; running, the server is told to stop it.
// Either way done gets the cause, once, and a cancel after the answer
// changes nothing.
func TestSendCancel(t *testing.T) {
	t.Parallel()
	srv := stdioServer("cancels", "--limit-tools")
	srv.MaxConcurrent = 1 // and no callTimeout: cancel is the only way out
	c := connect(t, srv, nil)
	running := make(chan struct{}, 100)
	ctx := context.WithoutCancel(context.Background())
	opts := &upstream.CallOptions{Progress: func(json.RawMessage) { running <- struct{}{} }}
	params := json.RawMessage(`{"name":"sleep","arguments":{"ms":60000,"steps":600},"_meta":{"progressToken":1}}`)
	busy := make(chan error, 1)
	stopBusy, ok := c.Send(ctx, "tools/call", params, opts, func(_ json.RawMessage, err error) { busy <- err })
	if !ok {
		t.Fatal("Send refused the first call")
	}
	select {
	case <-running: // the first progress: the call holds the slot
	case <-time.After(10 * time.Second):
		t.Fatal("the first call never reported progress")
	}
	cause := errors.New("the client cancelled")
	queued, withdraw := sendCancelable(t, c, ctx, "echo", `{"message":"queued"}`)
	withdraw(cause)
	if err := <-queued; err != cause {
		t.Errorf("call cancelled in line: err = %v, want the cause", err)
	}
	stopBusy(cause)
	select {
	case err := <-busy:
		if err != cause {
			t.Errorf("running call cancelled: err = %v, want the cause", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end the running call")
	}
	// The slot is free again, and the server was told to stop the call
	// (it would otherwise sleep a minute), which the withdrawn one never
	// reached.
	answered, late := sendCancelable(t, c, ctx, "echo", `{"message":"after"}`)
	if err := <-answered; err != nil {
		t.Errorf("a call after the cancels: %v", err)
	}
	late(cause) // after the answer: nothing to end
	testenv.Eventually(t, 10*time.Second, func() bool { return strings.HasPrefix(mustCallText(t, c, "stats", nil), `{"active":0,`) },
		"the server still runs the cancelled call: %s", mustCallText(t, c, "stats", nil))
	select {
	case err := <-answered:
		t.Errorf("a cancel after the answer ended the call again: %v", err)
	default:
	}
}

// TestSendMaxConcurrent: calls sent without waiting keep maxConcurrent
// (the rest wait in line and go out as slots free), and a call waiting in
// line ends on its callTimeout or its context without reaching the
// server.
func TestSendMaxConcurrent(t *testing.T) {
	t.Parallel()
	srv := stdioServer("narrow", "--limit-tools")
	srv.MaxConcurrent = 2
	c := connect(t, srv, nil)
	var answers []<-chan error
	for range 8 {
		answers = append(answers, send(t, c, context.Background(), "sleep", `{"ms":100}`))
	}
	for i, ch := range answers {
		if err := <-ch; err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if stats := mustCallText(t, c, "stats", nil); stats != `{"active":0,"peak":2}` {
		t.Errorf("server stats %s, want a peak of 2 calls at once", stats)
	}

	one := stdioServer("single", "--limit-tools")
	one.MaxConcurrent = 1
	one.CallTimeout = 500 * time.Millisecond
	c1 := connect(t, one, nil)
	running := make(chan struct{}, 100)
	opts := &upstream.CallOptions{Progress: func(json.RawMessage) { running <- struct{}{} }}
	params := json.RawMessage(`{"name":"sleep","arguments":{"ms":3000,"steps":60},"_meta":{"progressToken":1}}`)
	busy := make(chan error, 1)
	if _, ok := c1.Send(context.Background(), "tools/call", params, opts, func(_ json.RawMessage, err error) { busy <- err }); !ok {
		t.Fatal("Send refused the first call")
	}
	select {
	case <-running: // the first progress: the call holds the slot
	case <-time.After(10 * time.Second):
		t.Fatal("the first call never reported progress")
	}
	var te *upstream.TimeoutError
	if err := <-send(t, c1, context.Background(), "echo", `{"message":"queued"}`); !errors.As(err, &te) || te.Limit != upstream.LimitCallTimeout {
		t.Errorf("queued call: err = %v, want a callTimeout while waiting", err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	withdrawn := send(t, c1, cctx, "echo", `{"message":"withdrawn"}`)
	cancel()
	if err := <-withdrawn; !errors.Is(err, context.Canceled) {
		t.Errorf("call cancelled in line: err = %v, want context.Canceled", err)
	}
	if err := <-busy; err != nil {
		t.Errorf("the call holding the slot: %v", err)
	}
	if stats := mustCallText(t, c1, "stats", nil); stats != `{"active":0,"peak":1}` {
		t.Errorf("server stats %s: a call that waited in line reached the server", stats)
	}
}

// TestSendTimeoutRaces: calls whose callTimeout runs out about when their
// answers (or progress, or a free slot) come each end exactly once, with
// the result or a *TimeoutError, and the server goes on answering.
func TestSendTimeoutRaces(t *testing.T) {
	t.Parallel()
	srv := stdioServer("racy", "--limit-tools")
	srv.CallTimeout = 5 * time.Millisecond
	srv.MaxConcurrent = 16
	c := connect(t, srv, nil)
	const n = 300
	var ended [n]atomic.Int32
	var results, timeouts atomic.Int32
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		params := json.RawMessage(fmt.Sprintf(`{"name":"sleep","arguments":{"ms":%d}}`, i%10))
		_, sent := c.Send(context.Background(), "tools/call", params, nil, func(_ json.RawMessage, err error) {
			if ended[i].Add(1) != 1 {
				t.Errorf("call %d ended twice, the second time with %v", i, err)
				return
			}
			defer wg.Done()
			var te *upstream.TimeoutError
			switch {
			case err == nil:
				results.Add(1)
			case errors.As(err, &te):
				timeouts.Add(1)
			default:
				t.Errorf("call %d: %v, want its result or a *TimeoutError", i, err)
			}
		})
		if !sent {
			t.Fatal("Send refused a call to a connected stdio server")
		}
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatal("not every call ended")
	}
	t.Logf("%d results, %d timeouts", results.Load(), timeouts.Load())
	// The server goes on, and a call that timed out was cancelled there,
	// which stops it. Under a 5ms limit any one call may time out on a
	// busy machine, so each is asked until it gets through.
	text := func(tool string, args any) string {
		raw, err := callTool(t, c, tool, args)
		if err != nil {
			return err.Error()
		}
		return decodeResult(t, raw).Content[0].Text
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return text("echo", map[string]any{"message": "after"}) == "after" },
		"echo after the races never got through")
	testenv.Eventually(t, 10*time.Second, func() bool { return strings.HasPrefix(text("stats", nil), `{"active":0,`) },
		"the server still runs calls: %s", text("stats", nil))
}
