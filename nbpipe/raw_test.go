//go:build unix

package nbpipe

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

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

// TestPolledReader: what the writer writes arrives, a read waits in the
// poller until there is some, the writer going away is EOF, and a read
// waiting when the file is closed ends with ErrClosed.
func TestPolledReader(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pr := NewPolledReader(r)
	if _, ok := pr.(*PolledReader); !ok {
		t.Fatalf("NewPolledReader(os.Pipe's reader) = %T, want a *PolledReader", pr)
	}

	done := readOnce(pr)
	select {
	case res := <-done:
		t.Fatalf("read returned %+v before anything was written", res)
	case <-time.After(20 * time.Millisecond): // it waits, as it should
	}
	if _, err := w.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if res := wait(t, "read", done); res.err != nil || res.data != "hello\n" {
		t.Fatalf("read = %q, %v; want \"hello\\n\"", res.data, res.err)
	}

	// More than a pipe holds at once arrives whole and in order.
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	go func() {
		w.Write(big)
		w.Close()
	}()
	got, err := io.ReadAll(pr)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(big))
	}
	if n, err := pr.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("read after the writer closed = %d, %v; want EOF", n, err)
	}

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	done = readOnce(NewPolledReader(r2))
	r2.Close()
	if res := wait(t, "read after Close", done); !errors.Is(res.err, os.ErrClosed) {
		t.Errorf("read after Close = %q, %v; want ErrClosed", res.data, res.err)
	}
}

// TestPolledReaderBlockingFile: a file that does not wait in the poller
// (a blocking pipe, as a parent hands one over) is read as it is: a raw
// read(2) there would block its thread unseen by the runtime.
func TestPolledReaderBlockingFile(t *testing.T) {
	r, _ := blockingPipe(t)
	if pr := NewPolledReader(r); pr != io.Reader(r) {
		t.Fatalf("NewPolledReader(a blocking pipe) = %T, want the file itself", pr)
	}
}
