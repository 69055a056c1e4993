//go:build unix

package nbpipe

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// rawRead and rawWrite make one read(2) or write(2) on a descriptor in
// non-blocking mode without telling the runtime a system call is under
// way, as syscall.Read and syscall.Write do. A call that cannot wait
// leaves the runtime nothing to hand over meanwhile, and telling it costs
// far more than its bookkeeping:
//
//   - A goroutine entering a system call wakes Go's system monitor if it
//     sleeps because every P was idle, and the monitor then looks again
//     every 20 µs for the next millisecond. mcpx goes idle between bursts
//     of answers thousands of times a second under many callers; the
//     monitor took 14% of its CPU there, and 1% with these.
//   - A thread blocked in read(2) keeps its P; while the other P works,
//     the monitor takes that P away, and the thread must find one again
//     when its read returns. Blocking reads of the client's stdin made
//     the monitor and that hand-off about a third of mcpx's CPU per
//     sequential call. Reads wait in the poller instead, which the runtime's
//     own system calls serve, and with every read and write raw that
//     became the quicker way for sequential calls too.
//
// A pipe takes or gives at most its buffer (64 KiB by default) per call.
func rawRead(fd int, p []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// PolledReader reads a pipe or socket that waits in Go's poller, as
// os.Pipe and Pollable make them: an upstream's stdout, the client's
// stdin. Each read is one rawRead.
type PolledReader struct{ f *os.File }

// NewPolledReader returns a reader of f when f waits in Go's poller, and
// f itself when it does not (a raw read there would block the thread
// without the runtime knowing). f stays the caller's to close; a read
// waiting then ends with os.ErrClosed.
func NewPolledReader(f *os.File) io.Reader {
	if f.SetReadDeadline(time.Time{}) != nil { // refused when not in the poller
		return f
	}
	return &PolledReader{f: f}
}

func (r *PolledReader) Read(p []byte) (int, error) { return readPolled(r.f, p) }

// readPolled reads once from f, waiting in the poller while there is
// nothing to read; io.EOF when the writer is gone. It allocates nothing:
// the raw connection and the function it calls stay on the stack as long
// as f's SyscallConn is called here, where the compiler sees its type.
func readPolled(f *os.File, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = rawRead(int(fd), p)
			if rerr != syscall.EINTR {
				return rerr != syscall.EAGAIN // else wait, then read again
			}
		}
	})
	switch {
	case err != nil:
		// The only failure of RawConn.Read itself: f is closed.
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: os.ErrClosed}
	case rerr != nil:
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
