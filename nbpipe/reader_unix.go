//go:build unix

package nbpipe

import (
	"io"
	"os"
	"sync"
	"syscall"
)

// Reader reads a pipe or socket that mcpx alone reads, its stdin under
// an MCP client, waiting for input in whichever of two ways suits the
// moment, as the function given to PollWhen tells before each read:
//
//   - blocked in read(2), when it reports false, and when none was given.
//     A blocked read wakes the moment a line arrives: the quickest way
//     back for a client that waits for each answer before it asks again.
//     But the thread keeps the runtime's P while it waits, so while
//     answers are written on the other, Go's monitor takes that P away
//     and hands it round again and again: a fifth of mcpx's CPU under
//     many callers.
//   - in Go's poller, when it reports true: the P is free for the
//     goroutines writing answers, for a slower wake-up.
//
// The mode belongs to the open file, so every holder of it sees the
// change, as with Pollable.
type Reader struct {
	f    *os.File // in Go's poller, for the reads that wait there
	poll func() bool

	inPoller bool // the open file's mode: non-blocking

	// fd is another descriptor of the same open file, for the reads
	// that block in read(2): a blocked read on f would keep f's Close
	// waiting for it. It is closed once no read uses it.
	fd      int
	mu      sync.Mutex
	blocked bool // a read(2) on fd is under way
	closed  bool
}

// NewReader returns a Reader of f's descriptor (duplicates: f is left
// open and must not be read meanwhile), which waits blocked in read(2)
// until PollWhen says otherwise.
func NewReader(f *os.File) (*Reader, error) {
	p, err := Pollable(f)
	if err != nil {
		return nil, err
	}
	fd, err := dup(f)
	if err != nil {
		p.Close()
		return nil, err
	}
	// Blocking to begin with, whatever dup's f.Fd left.
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		p.Close()
		return nil, err
	}
	return &Reader{f: p, poll: never, fd: fd}, nil
}

func never() bool { return false }

// PollWhen has each later read wait in the poller when poll reports
// true, and blocked in read(2) when it reports false. poll runs on the
// reading goroutine, before each read; call PollWhen before reading.
func (r *Reader) PollWhen(poll func() bool) { r.poll = poll }

// Read reads once, waiting the way poll chooses when nothing is there.
// It is not safe for concurrent use.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	inPoller := r.poll()
	if inPoller != r.inPoller {
		// One fcntl per change of mode: a mode lasts as long as the
		// client's pace does.
		if err := syscall.SetNonblock(r.fd, inPoller); err != nil {
			return 0, r.pathError(err)
		}
		r.inPoller = inPoller
	}
	if inPoller {
		return readPolled(r.f, p)
	}
	n, err := r.readBlocked(p)
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readBlocked reads from fd in blocking mode.
func (r *Reader) readBlocked(p []byte) (int, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, os.ErrClosed
	}
	r.blocked = true
	r.mu.Unlock()

	n, err := ignoringEINTR(func() (int, error) { return syscall.Read(r.fd, p) })

	r.mu.Lock()
	r.blocked = false
	if r.closed {
		syscall.Close(r.fd)
		r.mu.Unlock()
		return 0, os.ErrClosed
	}
	r.mu.Unlock()
	if err != nil {
		return 0, r.pathError(err)
	}
	return n, nil
}

// Close closes the Reader without waiting: a read waiting in the poller
// ends at once, one blocked in read(2) when input comes or the writer
// goes.
func (r *Reader) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		if !r.blocked {
			syscall.Close(r.fd)
		}
	}
	r.mu.Unlock()
	return r.f.Close()
}

func (r *Reader) pathError(err error) error {
	return &os.PathError{Op: "read", Path: r.f.Name(), Err: err}
}

func ignoringEINTR(read func() (int, error)) (int, error) {
	for {
		n, err := read()
		if err != syscall.EINTR {
			if n < 0 {
				n = 0
			}
			return n, err
		}
	}
}
