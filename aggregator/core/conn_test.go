package core

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx/mcpx/frame"
)

// memConn is an in-memory Conn: the test sends the client's messages
// (send, then end for io.EOF) and receives the session's (out). It
// holds the session to the contract: Read and Write each from one
// goroutine at a time, Close once.
type memConn struct {
	in     chan []byte
	out    chan Routed
	closed chan struct{}

	reading, writing sync.Mutex
	closeOnce        sync.Once
	t                testing.TB
}

func newMemConn(t testing.TB) *memConn {
	return &memConn{in: make(chan []byte), out: make(chan Routed, QueueLen), closed: make(chan struct{}), t: t}
}

// send hands the session one line of the client's.
func (c *memConn) send(line string) { c.in <- []byte(line) }

// end ends the client's input: the session's next Read gets io.EOF.
func (c *memConn) end() { close(c.in) }

func (c *memConn) Read() (Message, error) {
	if !c.reading.TryLock() {
		c.t.Error("two Reads at once")
		return Message{}, errors.New("two Reads at once")
	}
	defer c.reading.Unlock()
	select {
	case line, ok := <-c.in:
		if !ok {
			return Message{}, io.EOF
		}
		m, err := ParseMessage(line)
		m.Invalid = err
		return m, nil
	case <-c.closed:
		return Message{}, errors.New("read after Close")
	}
}

func (c *memConn) Write(m Routed) error {
	if !c.writing.TryLock() {
		c.t.Error("two Writes at once")
	}
	defer c.writing.Unlock()
	select {
	case c.out <- m:
		return nil
	case <-c.closed:
		return errors.New("write after Close")
	}
}

func (c *memConn) Close() error {
	closed := false
	c.closeOnce.Do(func() { close(c.closed); closed = true })
	if !closed {
		c.t.Error("Close called twice")
	}
	return nil
}

// isClosed reports whether the session closed c.
func (c *memConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// TestStreamConn: a byte stream's Conn reads a line at a time, each the
// session's to keep, says whether another is waiting, turns a line over
// the limit and one that is not JSON into Messages that say so, and ends
// with io.EOF; Write puts one message on one line.
func TestStreamConn(t *testing.T) {
	in := strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"" + strings.Repeat("x", 200) + "\"}}\n" +
		"not json\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
	var out strings.Builder
	c := NewStreamConn(in, &out).(*streamConn)
	c.limit(100)
	m, err := c.Read()
	if err != nil || string(m.ID) != "1" || m.Method != "ping" || m.Invalid != nil {
		t.Fatalf("first Read: %+v, %v", m, err)
	}
	if !c.Buffered() {
		t.Error("lines are waiting, Buffered says none")
	}
	var tl *frame.TooLongError
	if m, err = c.Read(); err != nil || !errors.As(m.Invalid, &tl) {
		t.Errorf("a line over the limit: %+v, %v; want Invalid a *frame.TooLongError", m, err)
	}
	if m, err = c.Read(); err != nil || m.Invalid == nil {
		t.Errorf("a line that is not JSON: %+v, %v; want Invalid", m, err)
	}
	if m, err = c.Read(); err != nil || m.Method != "notifications/initialized" {
		t.Errorf("the last line, with no newline: %+v, %v", m, err)
	}
	if _, err = c.Read(); err != io.EOF {
		t.Errorf("after the last line: %v, want io.EOF", err)
	}
	if err := c.Write(Routed{Msg: []byte("{\n\"a\": 1}")}); err != nil || out.String() != "{\"a\":1}\n" {
		t.Errorf("Write: %q, %v; want the message on one line", out.String(), err)
	}
}

// TestServeLegacyClosesConn: the session closes its Conn once it ends,
// however it ends, and a session with no Conn is refused.
func TestServeLegacyClosesConn(t *testing.T) {
	c := newMemConn(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeLegacy(ctx, &fakeLegacy{}, c, SessionOptions{ID: "t"}) }()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if m := <-c.out; string(m.Answers) != "1" {
		t.Fatalf("got %s, want the answer to 1", m.Msg)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("cancelled: %v", err)
	}
	if !c.isClosed() {
		t.Error("the session ended and left its Conn open")
	}
	if err := ServeLegacy(context.Background(), &fakeLegacy{}, nil, SessionOptions{ID: "t2"}); err == nil {
		t.Error("a session with no Conn served")
	}
}
