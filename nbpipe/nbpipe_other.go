//go:build !unix

package nbpipe

import (
	"errors"
	"io"
	"os"
)

// ErrWouldBlock says a write could not go out whole without waiting.
var ErrWouldBlock = errors.New("the pipe is full")

// TryWrite never writes here: callers fall back to a blocking write on a
// goroutine of its own.
func TryWrite(*os.File, []byte) (int, error) { return 0, ErrWouldBlock }

// CanTry reports false: TryWrite never writes here.
func CanTry(*os.File) bool { return false }

// Pollable returns f: there is no non-blocking mode to set here.
func Pollable(f *os.File) (*os.File, error) { return f, nil }

// NewPolledReader returns f: reads here are the file's own.
func NewPolledReader(f *os.File) io.Reader { return f }
