//go:build unix

package nbpipe

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// nonblocking reports whether the open file r reads is in non-blocking
// mode.
func nonblocking(t *testing.T, r *Reader) bool {
	t.Helper()
	rc, err := r.f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return fcntlGet(t, rc, syscall.F_GETFL)&syscall.O_NONBLOCK != 0
}

// readResult is one Read's outcome.
type readResult struct {
	data string
	err  error
}

func readOnce(r io.Reader) <-chan readResult {
	done := make(chan readResult, 1)
	go func() {
		buf := make([]byte, 64)
		n, err := r.Read(buf)
		done <- readResult{string(buf[:n]), err}
	}()
	return done
}

// wait is for a result the test has made possible; the bound only turns
// a hang into a failure.
func wait(t *testing.T, what string, done <-chan readResult) readResult {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the read did not return", what)
		return readResult{}
	}
}

// TestReaderWaysToWait: each read waits the way the function given to
// PollWhen chose just before it, setting the open file's mode to match,
// and returns what the writer wrote in either mode; EOF when the writer
// is gone.
func TestReaderWaysToWait(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	r, err := NewReader(pr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pr.Close() // the Reader holds a duplicate

	var poll atomic.Bool
	var asked atomic.Int32
	r.PollWhen(func() bool { asked.Add(1); return poll.Load() })

	for i, inPoller := range []bool{false, true, true, false, true} {
		poll.Store(inPoller)
		done := readOnce(r)
		// Let the read start waiting; it must not return before the
		// write either way.
		time.Sleep(20 * time.Millisecond)
		select {
		case res := <-done:
			t.Fatalf("read %d returned %+v before anything was written", i, res)
		default:
		}
		if _, err := pw.Write([]byte("line\n")); err != nil {
			t.Fatal(err)
		}
		if res := wait(t, "read", done); res.err != nil || res.data != "line\n" {
			t.Fatalf("read %d (poller %v) = %q, %v; want the line", i, inPoller, res.data, res.err)
		}
		// Set before the read, and kept until the next.
		if nonblocking(t, r) != inPoller {
			t.Errorf("read %d: non-blocking mode %v, want %v", i, !inPoller, inPoller)
		}
	}
	if got := asked.Load(); got != 5 {
		t.Errorf("PollWhen's function was asked %d times for 5 reads", got)
	}
	pw.Close()
	if res := wait(t, "read at EOF", readOnce(r)); res.err != io.EOF {
		t.Errorf("read after the writer closed = %q, %v; want EOF", res.data, res.err)
	}
}

// TestReaderClose: Close never waits for a read. A read waiting in the
// poller ends at once with an error; one blocked in read(2) ends when
// its input comes.
func TestReaderClose(t *testing.T) {
	for _, inPoller := range []bool{true, false} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(pr)
		if err != nil {
			t.Fatal(err)
		}
		pr.Close()
		r.PollWhen(func() bool { return inPoller })
		done := readOnce(r)
		time.Sleep(20 * time.Millisecond) // the read waits
		closed := make(chan error, 1)
		go func() { closed <- r.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("poller %v: Close: %v", inPoller, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("poller %v: Close waited for the read", inPoller)
		}
		if inPoller {
			if res := wait(t, "read in the poller after Close", done); !errors.Is(res.err, os.ErrClosed) {
				t.Errorf("read in the poller after Close = %q, %v; want ErrClosed", res.data, res.err)
			}
		} else {
			if _, err := pw.Write([]byte("late\n")); err != nil {
				t.Fatal(err)
			}
			if res := wait(t, "blocked read after Close", done); !errors.Is(res.err, os.ErrClosed) {
				t.Errorf("blocked read after Close = %q, %v; want ErrClosed", res.data, res.err)
			}
		}
		pw.Close()
	}
}
