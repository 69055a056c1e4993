//go:build unix

package nbpipe

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// ErrWouldBlock says a write could not go out whole without waiting.
var ErrWouldBlock = errors.New("the pipe is full")

// TryWrite makes one write(2) of p to f and never waits: it returns how
// much f took, and ErrWouldBlock when that is less than all of p because
// the pipe is full. f must be in non-blocking mode, as os.Pipe makes it
// and Pollable leaves it (CanTry tells): the write(2) is a raw one (see
// rawWrite), and on a blocking descriptor it would hold its thread, and
// the runtime's next garbage collection, for as long as the pipe is full.
func TryWrite(f *os.File, p []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		n, werr = rawWrite(int(fd), p)
		return true // one attempt: the caller goes on elsewhere when it falls short
	})
	switch {
	case err != nil:
		return n, os.ErrClosed // the only failure of RawConn.Write itself
	case werr == syscall.EAGAIN || werr == syscall.EINTR || werr == nil && n < len(p):
		return n, ErrWouldBlock
	case werr != nil:
		return n, werr
	}
	return n, nil
}

// CanTry reports whether f is in non-blocking mode under Go's poller,
// so that TryWrite never waits on it. Call it before f is in use: it
// clears f's write deadline.
func CanTry(f *os.File) bool {
	return f.SetWriteDeadline(time.Time{}) == nil // refused when f is not pollable
}

// Pollable returns a File for f's descriptor in non-blocking mode, which
// Go's poller then waits on (so writes take deadlines and no thread sits
// blocked in read(2) or write(2)), and which TryWrite and PolledReader
// can use. It is for a pipe or socket mcpx alone uses, its stdin or
// stdout under an MCP client: the mode belongs to the open file, so every
// holder of it sees the change. f is left open and must not be used
// meanwhile.
func Pollable(f *os.File) (*os.File, error) {
	fd, err := dup(f)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("%s: non-blocking mode: %w", f.Name(), err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// dup duplicates f's descriptor, closed on exec as every descriptor Go
// opens is: a duplicate of mcpx's stdout that every server it spawns
// inherited would let any of them write into the client's stream, and
// keep that stream open after mcpx is gone.
func dup(f *os.File) (int, error) {
	syscall.ForkLock.RLock() // no fork between the dup and the flag
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return -1, fmt.Errorf("dup %s: %w", f.Name(), err)
	}
	syscall.CloseOnExec(fd)
	return fd, nil
}
