package stdio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/nbpipe"
)

// errDeaf breaks a connection whose server stopped reading its stdin in
// the middle of a line: nothing written after it could be understood.
var errDeaf = errors.New("the server stopped reading its stdin: a message to it was cut off")

// write writes one line whole. A write the pipe holds up (the server is
// not reading) ends with ctx: when nothing of the line was written the
// caller just gets ctx's error; when part of it was, the stream is broken
// and so is the transport.
func (t *Transport) write(ctx context.Context, line []byte) error {
	select {
	case t.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.done:
		return t.lost
	}
	defer func() { <-t.wsem }()
	return t.writeHeld(ctx, line, false)
}

// post writes line without ever waiting: what the pipe takes at once
// goes now, on the caller's goroutine; the rest, or all of it when
// another write is under way, is written by a goroutine of its own, as
// write would. A failure reaches failed. A request posted from mcpx's
// read loop thus costs no hand-off to another goroutine unless the
// server is slow to read. settled reports that post is done with line
// and failed: neither was left to a goroutine.
func (t *Transport) post(ctx context.Context, line []byte, failed func(error)) (settled bool) {
	select {
	case t.wsem <- struct{}{}:
	default:
		go func() {
			if err := t.write(ctx, line); err != nil {
				failed(err)
			}
		}()
		return false
	}
	select {
	case <-t.done:
		<-t.wsem
		failed(t.lost)
		return true
	default:
	}
	n, err := nbpipe.TryWrite(t.stdin, line)
	if err == nil && n == len(line) {
		<-t.wsem
		return true
	}
	if err != nil && !errors.Is(err, nbpipe.ErrWouldBlock) {
		err = t.writeFailed(ctx, n, err)
		<-t.wsem
		failed(err)
		return true
	}
	go func() {
		err := t.writeHeld(ctx, line[n:], n > 0)
		<-t.wsem
		if err != nil {
			failed(err)
		}
	}()
	return false
}

// writeHeld writes line, holding wsem, until it is written, ctx ends or
// the transport does; begun says part of the message went out already,
// so that stopping now would cut it.
func (t *Transport) writeHeld(ctx context.Context, line []byte, begun bool) error {
	select {
	case <-t.done:
		return t.lost // broken: nothing more goes out
	default:
	}
	if ctx.Done() != nil {
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			_ = t.stdin.SetWriteDeadline(time.Unix(1, 0))
			close(fired)
		})
		defer func() {
			if !stop() {
				// Clear the deadline only after it was set, or the next
				// caller's write could fail on this one's.
				<-fired
				_ = t.stdin.SetWriteDeadline(time.Time{})
			}
		}()
	}
	n, err := t.stdin.Write(line)
	if err == nil {
		return nil
	}
	if begun {
		n++ // any stop now cuts the message
	}
	return t.writeFailed(ctx, n, err)
}

// writeFailed is the error of a write that stopped after n bytes.
func (t *Transport) writeFailed(ctx context.Context, n int, err error) error {
	switch {
	case n > 0:
		t.fail(errDeaf)
		if t.broken != nil {
			t.broken(errDeaf)
		}
		return errDeaf
	case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrClosed):
		return jsonrpc.ErrClosed
	}
	return fmt.Errorf("write to the server: %w", err)
}
