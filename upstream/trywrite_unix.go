//go:build unix

package upstream

import (
	"errors"
	"os"
	"syscall"
)

// errWouldBlock says a write could not go out without waiting.
var errWouldBlock = errors.New("the pipe is full")

// tryWrite makes one write(2) of p to f and never waits: it returns how
// much the pipe took, and errWouldBlock when it took less than all of it
// (or nothing) because it is full. f must be in non-blocking mode, as
// os.Pipe makes it, or the write could wait after all.
func tryWrite(f *os.File, p []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), p)
		return true // one attempt: the caller goes on elsewhere when it falls short
	})
	if n < 0 {
		n = 0
	}
	switch {
	case err != nil:
		return n, os.ErrClosed // the only failure of RawConn.Write itself
	case werr == syscall.EAGAIN || werr == syscall.EINTR || werr == nil && n < len(p):
		return n, errWouldBlock
	case werr != nil:
		return n, werr
	}
	return n, nil
}
