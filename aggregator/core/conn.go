package core

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/mcpx/mcpx/frame"
)

// A Conn is one legacy client's connection as its session uses it: the
// client's messages, read one at a time, and the session's, written one
// at a time with what each is. A transport implements it (HTTP, a test's
// in-memory pair); a byte stream (stdio) is one through [NewStreamConn].
//
// The session calls Read from one goroutine, one call at a time, until it
// returns an error; Write from one goroutine, one call at a time,
// concurrently with Read; and Close once, when it has ended, concurrently
// with a Read that has not returned (a read from a pipe cannot be
// interrupted: the session does not wait for it). A Write may block
// while the client reads slowly, which holds up that session alone.
type Conn interface {
	// Read returns the client's next message as ParseMessage decodes it.
	// Bytes that are not a message come back as a Message whose Invalid
	// says why (a *frame.TooLongError for one over the session's limit),
	// which the session answers. io.EOF: the client has sent all it
	// will; the session answers what is in flight (SessionOptions.Linger)
	// and ends. A Message's bytes are the session's to keep.
	Read() (Message, error)
	// Write delivers one of the session's messages. An error ends the
	// session.
	Write(m Routed) error
	// Close releases the connection once the session is done with it.
	Close() error
}

// A Buffered Conn says whether its next Read returns at once. The session
// sends the requests it gathered for an upstream (one write each) when
// no message is waiting, so that a burst shares writes; with a Conn that
// cannot say, it sends them after every message.
type Buffered interface {
	Buffered() bool
}

// NewStreamConn returns the Conn of a byte stream of newline-delimited
// JSON-RPC, an MCP client's stdin and stdout: in carries its messages,
// one a line, out the session's. The session writes to out through its
// own queue rather than Write, so that an out that is a [TryWriter] takes
// answers straight from an upstream's reader, with no goroutine between.
// Neither end is closed: they are the caller's.
func NewStreamConn(in io.Reader, out io.Writer) Conn {
	return &streamConn{in: in, out: out}
}

// streamConn is NewStreamConn's Conn.
type streamConn struct {
	in  io.Reader
	out io.Writer
	r   *frame.Reader // made by limit, or by the first Read
}

// limit bounds each line the stream reads to max bytes (0: none); the
// session sets it before its first Read.
func (c *streamConn) limit(max int64) { c.r = frame.NewReader(c.in, max) }

func (c *streamConn) Read() (Message, error) {
	if c.r == nil {
		c.limit(0)
	}
	for {
		line, err := c.r.Next()
		if err != nil {
			// Declared here, not per line: tl escapes, and would cost
			// every message an allocation.
			var tl *frame.TooLongError
			if errors.As(err, &tl) {
				// Read through without being kept: answered with an error.
				return Message{Invalid: tl}, nil
			}
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if !c.r.Owned() {
				// The reader reuses its buffer, and the session keeps
				// the message.
				line = bytes.Clone(line)
			}
			m, perr := ParseMessage(line)
			m.Invalid = perr
			return m, nil
		}
		if err != nil {
			return Message{}, err
		}
	}
}

// Buffered reports whether a whole line is already read and waiting.
func (c *streamConn) Buffered() bool { return c.r != nil && c.r.HasLine() }

// Write writes m's message as one line. The session does not call it (see
// NewStreamConn); it is there for any other user of the Conn.
func (c *streamConn) Write(m Routed) error {
	if m.Msg == nil {
		return nil
	}
	_, err := c.out.Write(append(slices.Clip(oneLine(m.Msg)), '\n'))
	return err
}

// Close does nothing: the stream's ends belong to whoever made it.
func (c *streamConn) Close() error { return nil }
