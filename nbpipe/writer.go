package nbpipe

import (
	"errors"
	"os"
)

// Writer is a pipe or socket in non-blocking mode as a writer that can
// also write without waiting: what the server core's output wants of
// stdout (core.TryWriter).
type Writer struct{ f *os.File }

// NewWriter returns f as a Writer, and false when f cannot be written
// without waiting (CanTry).
func NewWriter(f *os.File) (*Writer, bool) {
	if !CanTry(f) {
		return nil, false
	}
	return &Writer{f}, true
}

// Write writes all of p, waiting in Go's poller while the pipe is full.
func (w *Writer) Write(p []byte) (int, error) { return w.f.Write(p) }

// TryWrite makes one write of p and never waits (see TryWrite): blocked
// says that the pipe took only n bytes because it is full.
func (w *Writer) TryWrite(p []byte) (n int, blocked bool, err error) {
	n, err = TryWrite(w.f, p)
	if errors.Is(err, ErrWouldBlock) {
		return n, true, nil
	}
	return n, false, err
}
