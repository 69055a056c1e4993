package aggregator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
)

// rpcMsg is any JSON-RPC message the server wrote.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	line []byte
}

// stdioClient speaks raw JSON-RPC lines to an Aggregator's ServeStdio over
// in-memory pipes. A reader goroutine sorts every line the server writes
// into responses (by id) and notifications, and checks that each line is
// one JSON-RPC 2.0 message.
type stdioClient struct {
	tb   testing.TB
	a    *Aggregator
	in   *io.PipeWriter
	done chan error // ServeStdio's result

	writeMu sync.Mutex

	mu        sync.Mutex
	wake      chan struct{} // closed and replaced on every line
	responses map[string][]rpcMsg
	notes     []rpcMsg
	requests  []rpcMsg // the server's requests to the client, unanswered
	lines     int
	bad       []string
	// mayCutLast forgives a cut last line: a session that gave up on a
	// client that stopped reading leaves the line it was writing unfinished.
	mayCutLast bool
	eof        bool
	syncs      int // pings sent by sync

	gate *readGate // lets a test stop reading the server's output
}

// readGate is the client's end of the server's output; while it is
// stopped the client reads nothing, like a client that hung.
type readGate struct {
	r    io.Reader
	mu   sync.Mutex
	open chan struct{} // closed while reading is allowed
}

func newReadGate(r io.Reader) *readGate {
	g := &readGate{r: r, open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *readGate) Read(p []byte) (int, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	<-open
	return g.r.Read(p)
}

// stop makes the client stop reading (after the read under way, if any).
func (g *readGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

// resume lets the client read again.
func (g *readGate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// serve starts ServeStdio over pipes on an Aggregator whose catalog is
// built from members. The cleanup stops the server, waits for ServeStdio
// and the reader, and fails the test if any output line was not a JSON-RPC
// 2.0 message.
func serve(tb testing.TB, members ...*member) *stdioClient {
	tb.Helper()
	return serveWith(tb, nil, members...)
}

// serveWith is serve with Aggregator options.
func serveWith(tb testing.TB, opts *Options, members ...*member) *stdioClient {
	tb.Helper()
	return serveConfig(tb, &config.Config{Separator: "_", Expose: config.ExposeDirect}, opts, members...)
}

// serveConfig is serveWith with a config (for its limits).
func serveConfig(tb testing.TB, cfg *config.Config, opts *Options, members ...*member) *stdioClient {
	tb.Helper()
	a := New(cfg, opts)
	a.members = members
	a.Rebuild()
	close(a.ready)
	return serveOn(tb, a)
}

// serveOn serves a ready Aggregator to one more client.
func serveOn(tb testing.TB, a *Aggregator) *stdioClient {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &stdioClient{tb: tb, a: a, in: inW, done: make(chan error, 1),
		wake: make(chan struct{}), responses: map[string][]rpcMsg{}, gate: newReadGate(outR)}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := a.ServeStdio(ctx, inR, outW)
		outW.Close()
		inR.Close()
		c.done <- err
	}()
	go func() {
		defer wg.Done()
		c.readLoop(c.gate)
	}()
	tb.Cleanup(func() {
		cancel() // not EOF: that would give calls in flight a grace period
		inW.Close()
		c.gate.resume()
		wg.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, b := range c.bad {
			tb.Errorf("output line is not one JSON-RPC 2.0 message: %s", b)
		}
	})
	return c
}

func (c *stdioClient) readLoop(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	lastBad := false
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		msg, problem := parseOutput(line)
		c.mu.Lock()
		c.lines++
		lastBad = problem != ""
		switch {
		case problem != "":
			c.bad = append(c.bad, problem+": "+string(line))
		case msg.Method != "" && hasID(line):
			c.requests = append(c.requests, msg)
		case msg.Method != "":
			c.notes = append(c.notes, msg)
		default:
			k := idKey(msg.ID)
			c.responses[k] = append(c.responses[k], msg)
		}
		close(c.wake)
		c.wake = make(chan struct{})
		c.mu.Unlock()
	}
	c.mu.Lock()
	if lastBad && c.mayCutLast {
		c.bad = c.bad[:len(c.bad)-1]
	}
	if err := sc.Err(); err != nil {
		c.bad = append(c.bad, "read: "+err.Error())
	}
	c.eof = true
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
	io.Copy(io.Discard, r)
}

// parseOutput checks that line is exactly one JSON-RPC 2.0 message: a
// notification (method, no id), a request (method and id) or a response
// (id and exactly one of result and error).
func parseOutput(line []byte) (rpcMsg, string) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return rpcMsg{}, "not a JSON object"
	}
	if string(fields["jsonrpc"]) != `"2.0"` {
		return rpcMsg{}, `jsonrpc is not "2.0"`
	}
	var msg rpcMsg
	if err := json.Unmarshal(line, &msg); err != nil {
		return rpcMsg{}, err.Error()
	}
	msg.line = line
	_, hasID := fields["id"]
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	switch {
	case msg.Method != "":
		if hasResult || hasError {
			return msg, "a request or notification with a result or error"
		}
	case !hasID:
		return msg, "neither a notification nor a response"
	case hasResult == hasError:
		return msg, "a response needs exactly one of result and error"
	case hasError && (msg.Error == nil || msg.Error.Message == ""):
		return msg, "an error without code and message"
	}
	return msg, ""
}

// hasID reports whether a message has an id other than null.
func hasID(line []byte) bool {
	var m struct{ ID *json.RawMessage }
	return json.Unmarshal(line, &m) == nil && m.ID != nil
}

// idKey is the text of a JSON-RPC id, compacted.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// send writes one line (a newline is added).
func (c *stdioClient) send(line string) {
	c.tb.Helper()
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.tb.Errorf("write %s: %v", line, err)
	}
}

// request sends a request; id is anything JSON (a number or a string).
func (c *stdioClient) request(id any, method string, params any) {
	c.tb.Helper()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(string(mustJSON(c.tb, m)))
}

func (c *stdioClient) notify(method string, params any) {
	c.tb.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(string(mustJSON(c.tb, m)))
}

// call sends a request and waits for its response.
func (c *stdioClient) call(id any, method string, params any) rpcMsg {
	c.tb.Helper()
	c.request(id, method, params)
	return c.await(id, 5*time.Second)
}

// await waits for the response with that id, failing the test after d.
func (c *stdioClient) await(id any, d time.Duration) rpcMsg {
	c.tb.Helper()
	return c.awaitNth(id, 0, d)
}

// awaitNth waits for the (n+1)th response with that id (ids such as null
// can repeat), failing the test after d.
func (c *stdioClient) awaitNth(id any, n int, d time.Duration) rpcMsg {
	c.tb.Helper()
	k := idKey(mustJSON(c.tb, id))
	msg, ok := c.waitFor(d, func() (rpcMsg, bool) {
		if r := c.responses[k]; len(r) > n {
			return r[n], true
		}
		return rpcMsg{}, false
	})
	if !ok {
		c.tb.Fatalf("no response #%d for id %s within %v", n+1, k, d)
	}
	return msg
}

// waitFor waits until cond (called with c.mu held) holds, the output ends,
// or d passes.
func (c *stdioClient) waitFor(d time.Duration, cond func() (rpcMsg, bool)) (rpcMsg, bool) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		msg, ok := cond()
		wake, eof := c.wake, c.eof
		c.mu.Unlock()
		if ok || eof {
			return msg, ok
		}
		select {
		case <-wake:
		case <-deadline.C:
			return rpcMsg{}, false
		}
	}
}

// responsesFor returns every response seen so far with that id.
func (c *stdioClient) responsesFor(id any) []rpcMsg {
	k := idKey(mustJSON(c.tb, id))
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rpcMsg(nil), c.responses[k]...)
}

// notesSince returns the notifications after the first n.
func (c *stdioClient) notesSince(n int) []rpcMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rpcMsg(nil), c.notes[n:]...)
}

func (c *stdioClient) noteCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.notes)
}

// sync sends a ping and waits for its answer: everything the server queued
// before it read the ping has then been seen.
func (c *stdioClient) sync() {
	c.tb.Helper()
	c.mu.Lock()
	c.syncs++
	id := fmt.Sprintf("sync-%d", c.syncs)
	c.mu.Unlock()
	if r := c.call(id, "ping", nil); r.Error != nil {
		c.tb.Fatalf("ping: %s", r.line)
	}
}

// initialize performs the handshake: initialize, then
// notifications/initialized.
func (c *stdioClient) initialize() rpcMsg {
	c.tb.Helper()
	r := c.call(0, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "test", "version": "1"},
	})
	if r.Error != nil {
		c.tb.Fatalf("initialize: %s", r.line)
	}
	c.notify("notifications/initialized", nil)
	return r
}
