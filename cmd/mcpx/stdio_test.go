//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/log"
)

// TestPollableIn: stdin as a client hands it over, a pipe in blocking
// mode, is read in Go's poller through a descriptor of mcpx's own, which
// done closes, leaving stdin itself open; stdin redirected from a file,
// which no poller can wait on, is read as it is.
func TestPollableIn(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil { // blocking, as a client hands it over
		t.Fatal(err)
	}
	stdin, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	defer stdin.Close()
	defer w.Close()
	logger := log.New(io.Discard)

	in, done := pollableIn(&streams{In: stdin}, logger)
	if in == io.Reader(stdin) {
		t.Fatal("a blocking pipe is read as it is, blocking a thread in read(2)")
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "{}\n" {
		t.Fatalf("read %q, %v; want the client's line", buf[:n], err)
	}
	done()
	read := make(chan error, 1)
	go func() {
		_, err := in.Read(buf)
		read <- err
	}()
	select {
	case err := <-read:
		if err == nil {
			t.Error("a read after done succeeded; want the descriptor closed")
		}
	case <-time.After(10 * time.Second): // only turns a hang into a failure
		t.Fatal("a read after done waited; want the descriptor closed")
	}
	if err := syscall.SetNonblock(int(stdin.Fd()), false); err != nil {
		t.Errorf("stdin itself was closed by done: %v", err)
	}

	file := filepath.Join(t.TempDir(), "requests.jsonl")
	if err := os.WriteFile(file, []byte("{}\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, done = pollableIn(&streams{In: f}, logger)
	defer done()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "{}\n{}\n" {
		t.Errorf("a file read through pollableIn: %q, %v; want its contents", got, err)
	}
}
