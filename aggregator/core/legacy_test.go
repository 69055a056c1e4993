package core

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeLegacy is a catalog that answers from memory and records what the
// session passed it.
type fakeLegacy struct {
	mu          sync.Mutex
	joined      *Client
	initialized *Client
	left        bool
}

func (f *fakeLegacy) Join(c *Client) (func(), error) {
	f.mu.Lock()
	f.joined = c
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.left = true
		f.mu.Unlock()
	}, nil
}

func (f *fakeLegacy) Ready(context.Context, string) {}

func (f *fakeLegacy) List(_ context.Context, method string) (json.RawMessage, error) {
	return json.RawMessage(`{"listed":` + quote(method) + `}`), nil
}

// isJoined reports whether c is the client that joined.
func (f *fakeLegacy) isJoined(c *Client) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return c != nil && c == f.joined
}

// Call answers with the method, when c is the client that joined. The
// tool "progress" first reports progress as a source would: for the
// request's own token, and for a token no request declared.
func (f *fakeLegacy) Call(_ context.Context, from Caller, method string, params json.RawMessage) (json.RawMessage, error) {
	c, _ := from.(*Client)
	if !f.isJoined(c) {
		return nil, &Error{Code: CodeInternalError, Message: "the call is not its client's"}
	}
	if strings.Contains(string(params), `"progress"`) {
		c.Progress(json.RawMessage(`{"progressToken":"p6","progress":1}`))
		c.Progress(json.RawMessage(`{"progressToken":"other","progress":2}`))
	}
	return json.RawMessage(`{"called":` + quote(method) + `}`), nil
}

// Send takes the tool "fast" and answers it from a goroutine of its own,
// as an upstream's reader would.
func (f *fakeLegacy) Send(ctx context.Context, from Caller, _ string, params json.RawMessage,
	done func(json.RawMessage, error)) (func(error), bool) {
	c, _ := from.(*Client)
	if !strings.Contains(string(params), `"fast"`) || !f.isJoined(c) {
		return nil, false
	}
	if o := c.Options(); o.Batch == nil || o.Flusher == nil || o.Progress == nil {
		go done(nil, &Error{Code: CodeInternalError, Message: "the call's options lack the batch, flusher or progress"})
		return func(error) {}, true
	}
	go done(json.RawMessage(`{"sent":true}`), nil)
	return func(error) {}, true
}

func (f *fakeLegacy) Tool(string) (json.RawMessage, bool) { return nil, false }

func (f *fakeLegacy) Watch(context.Context, []string, func(string, json.RawMessage)) {}

func (f *fakeLegacy) Initialized(c *Client) {
	f.mu.Lock()
	f.initialized = c
	f.mu.Unlock()
}

func (f *fakeLegacy) RootsChanged() {}

func (f *fakeLegacy) Modern() (*Server, error) { return NewServer(nil, nil) }

// TestServeLegacy drives a legacy session, over an in-memory Conn, on a catalog that is not the
// aggregator: the session passes the one Client it joined with to every
// call, and what a call sent without waiting carries (Client.Options); the transport gets each message
// with what it is; list changes reach the client only for a list it
// fetched; a source's progress goes to the stream of the request whose
// token it names, found from the request, not read back from the
// notification; and the client leaves the catalog when the session ends.
func TestServeLegacy(t *testing.T) {
	cat := &fakeLegacy{}
	conn := newMemConn(t)
	opts := SessionOptions{ID: "t1", Version: "9.9", Drain: time.Minute}
	served := make(chan error, 1)
	go func() { served <- ServeLegacy(context.Background(), cat, conn, opts) }()
	answers := map[string]string{}
	next := func() Routed {
		m := <-conn.out
		if m.Answers != nil {
			answers[string(m.Answers)] = string(m.Msg)
		}
		return m
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tester","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fast"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p6"}}}`,
	} {
		conn.send(line)
	}
	progress := map[string]string{} // stream: message
	for len(answers) < 6 {
		if m := next(); strings.Contains(string(m.Msg), "notifications/progress") {
			progress[string(m.Of)] = string(m.Msg)
		}
	}
	if !strings.Contains(progress["6"], `"p6"`) || !strings.Contains(progress[""], `"other"`) || len(progress) != 2 {
		t.Errorf("progress by stream: %q; want p6's on request 6's stream and the undeclared token's on none", progress)
	}
	c := cat.joined
	if c.ID() != "t1" || c.Name() != "tester" {
		t.Errorf("client %q named %q, want t1 and tester", c.ID(), c.Name())
	}
	// Tools were fetched, prompts were not: one notification. Asked
	// again, tools were not fetched since: the note is next.
	c.ListChanged(ListTools, ListPrompts)
	c.ListChanged(ListTools)
	c.Notify("notifications/message", json.RawMessage(`{"level":"info","data":"note"}`))
	for _, want := range []string{"notifications/tools/list_changed", "notifications/message"} {
		if m := next(); !strings.Contains(string(m.Msg), want) {
			t.Errorf("got %s, want %s", m.Msg, want)
		}
	}
	conn.end()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"1": "before initialize",
		"2": `"serverInfo":{"name":"mcpx","version":"9.9"}`,
		"3": `"listed":"tools/list"`,
		"4": `"called":"tools/call"`,
		"5": `"sent":true`,
		"6": `"called":"tools/call"`,
	} {
		if !strings.Contains(answers[id], want) {
			t.Errorf("answer to %s: %s, want it to hold %s", id, answers[id], want)
		}
	}
	cat.mu.Lock()
	defer cat.mu.Unlock()
	if cat.initialized != cat.joined || !cat.left {
		t.Errorf("initialized %p, joined %p, left %v: want the joined client initialized, then gone", cat.initialized, cat.joined, cat.left)
	}
}
