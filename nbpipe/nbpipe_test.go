//go:build unix

package nbpipe

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
)

// TestTryWriteFullPipe: a pipe nobody reads takes what fits, then says it
// would block, never waiting; everything it said it took arrives in order.
func TestTryWriteFullPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if !CanTry(w) {
		t.Fatal("CanTry(os.Pipe) = false, want true")
	}
	chunk := bytes.Repeat([]byte("x"), 1<<20) // more than any pipe buffer
	n, err := TryWrite(w, chunk)
	if !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("TryWrite of 1 MiB to an unread pipe: n=%d err=%v, want ErrWouldBlock", n, err)
	}
	if n <= 0 || n >= len(chunk) {
		t.Fatalf("took %d of %d bytes, want part of it", n, len(chunk))
	}
	if m, err := TryWrite(w, []byte("y")); !errors.Is(err, ErrWouldBlock) || m != 0 {
		t.Fatalf("TryWrite to a full pipe: n=%d err=%v, want 0 and ErrWouldBlock", m, err)
	}
	w.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || !bytes.Equal(got, chunk[:n]) {
		t.Fatalf("read %d bytes, want the %d TryWrite took", len(got), n)
	}
}

// TestTryWriteClosed: writing to a closed file or a pipe whose reader is
// gone is an error, not a would-block.
func TestTryWriteClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := TryWrite(w, []byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("TryWrite with the reader gone: %v, want EPIPE", err)
	}
	w.Close()
	if _, err := TryWrite(w, []byte("x")); err == nil || errors.Is(err, ErrWouldBlock) {
		t.Errorf("TryWrite to a closed file: %v, want an error", err)
	}
}

// TestPollable: a blocking descriptor (as a parent hands over stdout)
// comes back as a non-blocking file TryWrite can use, writing to the
// same pipe.
func TestPollable(t *testing.T) {
	r, w := blockingPipe(t)
	if CanTry(w) {
		t.Fatal("CanTry of a blocking pipe = true, want false")
	}
	p, err := Pollable(w)
	if err != nil {
		t.Fatal(err)
	}
	if !CanTry(p) {
		t.Fatal("CanTry(Pollable(w)) = false")
	}
	if !closedOnExec(t, p) {
		t.Error("Pollable's descriptor would pass to every process mcpx spawns")
	}
	if n, err := TryWrite(p, []byte("hello\n")); err != nil || n != 6 {
		t.Fatalf("TryWrite = %d, %v", n, err)
	}
	p.Close()
	w.Close()
	got, _ := io.ReadAll(r)
	if string(got) != "hello\n" {
		t.Errorf("read %q", got)
	}
}

// blockingPipe returns a pipe in blocking mode, unlike os.Pipe's, as a
// parent hands one over; the test closes it.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() {
		r.Close()
		w.Close()
	})
	return r, w
}

// closedOnExec reports whether f's descriptor closes on exec.
func closedOnExec(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return fcntlGet(t, rc, syscall.F_GETFD)&syscall.FD_CLOEXEC != 0
}

// fcntlGet returns what fcntl's get command cmd (F_GETFD, F_GETFL) says
// of rc's descriptor, asked without touching the file's mode (Fd would
// make it blocking).
func fcntlGet(t *testing.T, rc syscall.RawConn, cmd int) uintptr {
	t.Helper()
	var v uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		v, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), 0)
	}); err != nil || errno != 0 {
		t.Fatalf("fcntl: %v %v", err, errno)
	}
	return v
}
