package trust

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// tool is a small tool definition named name.
func tool(name string) string {
	return fmt.Sprintf(`{"name":%q,"description":"Tool %s.","inputSchema":{"type":"object"}}`, name, name)
}

// TestFirstUsesWrittenInOneWrite: a thousand servers seen for the first
// time within Quiet of each other are written in one write, after the
// last of them; until then nothing is written, and what is written is
// every one of them.
func TestFirstUsesWrittenInOneWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		var writes atomic.Int32
		s, err := Open(dir, &Options{Quiet: 250 * time.Millisecond, MaxDelay: 10 * time.Second, OnWrite: func() { writes.Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		const n = 1000
		for i := range n {
			name := fmt.Sprintf("s%d", i)
			if r := s.Review(name, ModePin, raws(tool("a"), tool("b")), nil, nil); r.Pinned || r.WithheldCount() != 0 {
				t.Fatalf("first use of %s: %+v", name, r)
			}
			if i%100 == 0 {
				time.Sleep(100 * time.Millisecond) // within Quiet of the last
			}
		}
		synctest.Wait()
		if got := writes.Load(); got != 0 {
			t.Fatalf("%d writes before Quiet passed, want none", got)
		}
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		if got := writes.Load(); got != 1 {
			t.Fatalf("%d writes of %d first uses, want 1", got, n)
		}
		other, err := Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if other.Pinned(fmt.Sprintf("s%d", i)) == nil {
				t.Fatalf("server s%d is not in the file", i)
			}
		}
		// Reviews after the write, of the same lists, write nothing more.
		for i := range n {
			s.Review(fmt.Sprintf("s%d", i), ModePin, raws(tool("a"), tool("b")), nil, nil)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := writes.Load(); got != 1 {
			t.Errorf("%d writes after reviews of pinned servers, want still 1", got)
		}
	})
}

// TestFirstUsesWaitAtMostMaxDelay: first uses that keep coming, each
// within Quiet of the last, are written MaxDelay after the first.
func TestFirstUsesWaitAtMostMaxDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var writes atomic.Int32
		s, err := Open(t.TempDir(), &Options{Quiet: 250 * time.Millisecond, MaxDelay: 2 * time.Second, OnWrite: func() { writes.Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		start := time.Now()
		for i := 0; time.Since(start) < 2050*time.Millisecond; i++ {
			s.Review(fmt.Sprintf("s%d", i), ModePin, raws(tool("a")), nil, nil)
			time.Sleep(150 * time.Millisecond)
			synctest.Wait()
			if got, want := writes.Load(), int32(0); time.Since(start) < 2*time.Second && got != want {
				t.Fatalf("%d writes at %v, want none before MaxDelay", got, time.Since(start))
			}
		}
		if got := writes.Load(); got != 1 {
			t.Errorf("%d writes after MaxDelay, want 1", got)
		}
	})
}

// TestApprovalWrittenBeforeItReturns: an approval is in the file when
// Approve returns, with the first uses that waited, so that a process
// that dies next (no Close) loses nothing the user approved. A first use
// that had not been written is lost with it: the next start records it
// again.
func TestApprovalWrittenBeforeItReturns(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, &Options{Quiet: time.Hour, MaxDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.Review("fx", ModePin, raws(echo), nil, nil)
	if err := s.Close(); err != nil { // writes fx's first use
		t.Fatal(err)
	}

	// The next run: fx changed, and a new server waits for its write.
	s, err = Open(dir, &Options{Quiet: time.Hour, MaxDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.Review("fresh", ModePin, raws(add), nil, nil)
	r := s.Review("fx", ModePin, raws(echoNew), nil, nil)
	if r.WithheldCount() != 1 {
		t.Fatalf("changed echo: withheld %d, want 1", r.WithheldCount())
	}
	if err := s.Approve(r); err != nil {
		t.Fatal(err)
	}
	// The process dies here: no Close. Another process reads the file.
	after, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := after.Review("fx", ModePin, raws(echoNew), nil, nil); r.WithheldCount() != 0 || !r.Pinned {
		t.Errorf("the approval is not in the file: %+v", r.Changes)
	}
	if after.Pinned("fresh") == nil {
		t.Error("the first use that waited was not written with the approval")
	}

	// A first use still waiting when the process dies is not in the file.
	s.Review("late", ModePin, raws(add), nil, nil)
	again, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Pinned("late") != nil {
		t.Error("a first use was written before its delay")
	}
}

// TestAnotherProcessRecordsFirst: when another process wrote a server's
// pins while this store's first use of it waited, the file's record
// wins, and the lists this store trusted are compared with it.
func TestAnotherProcessRecordsFirst(t *testing.T) {
	dir := t.TempDir()
	mine, err := Open(dir, &Options{Quiet: time.Hour, MaxDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	mine.Review("fx", ModePin, raws(echoNew), nil, nil)
	theirs.Review("fx", ModePin, raws(echo), nil, nil)
	if err := theirs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mine.Close(); err != nil {
		t.Fatal(err)
	}
	check, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := check.Review("fx", ModePin, raws(echo), nil, nil); r.WithheldCount() != 0 {
		t.Errorf("the other process's record was replaced: %+v", r.Changes)
	}
	if r := mine.Review("fx", ModePin, raws(echoNew, add), nil, nil); r.WithheldCount() != 2 {
		t.Errorf("withheld %d after the file's record won, want 2 (echo changed, add new)", r.WithheldCount())
	}
}

// TestCloseWritesFirstUses: Close writes what waits, once; a review
// after it records nothing.
func TestCloseWritesFirstUses(t *testing.T) {
	dir := t.TempDir()
	var writes atomic.Int32
	s, err := Open(dir, &Options{Quiet: time.Hour, MaxDelay: time.Hour, OnWrite: func() { writes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		s.Review(fmt.Sprintf("s%d", i), ModeWarn, raws(tool("a")), raws(greet), nil)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Review("after", ModePin, raws(tool("a")), nil, nil)
	if got := writes.Load(); got != 1 {
		t.Errorf("%d writes, want 1", got)
	}
	other, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := other.Pinned("s49"); p == nil || len(p.Tools) != 1 || len(p.Prompts) != 1 {
		t.Errorf("s49's pins: %+v", p)
	}
	if other.Pinned("after") != nil {
		t.Error("a review after Close was recorded")
	}
}

// TestWrittenFirstUseHeldAsRead: once a first use is written, the store
// holds its pins as a store opening the file reads them (it decodes what
// it wrote, see update), and a review of the same lists still finds
// nothing changed.
func TestWrittenFirstUseHeldAsRead(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools := raws(tool("a"), `{"name":"b","description":"<b>bold</b> & more","inputSchema":{"type":"object","properties":{"z":{},"a":{}}}}`)
	s.Review("srv", ModePin, tools, nil, nil)
	s.Flush()
	other, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	held, read := s.Pinned("srv"), other.Pinned("srv")
	if held == nil || read == nil {
		t.Fatalf("pins held %v, read %v: want both", held, read)
	}
	if !held.Approved.Equal(read.Approved) || len(held.Tools) != 2 {
		t.Fatalf("held %+v, read %+v", held, read)
	}
	for name, rec := range read.Tools {
		if got := held.Tools[name]; got.SHA256 != rec.SHA256 || string(got.Definition) != string(rec.Definition) {
			t.Errorf("tool %s held as %s (%s), read as %s (%s)", name, got.Definition, got.SHA256, rec.Definition, rec.SHA256)
		}
	}
	if r := s.Review("srv", ModePin, tools, nil, nil); len(r.Changes) != 0 {
		t.Errorf("the same lists reviewed after the write: changes %+v", r.Changes)
	}
	s.Review("srv", ModePin, tools[:1], nil, nil) // another list: compared with the pins held
	if r := s.Review("srv", ModePin, tools, nil, nil); !r.Pinned || len(r.Changes) != 0 {
		t.Errorf("the first lists reviewed again: pinned %v, changes %+v", r.Pinned, r.Changes)
	}
}

// The store holds the fingerprints of what the file holds, not the
// definitions; a change is still shown against the approved definition,
// read from the file when the change is found.
func TestHeldPinsLean(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Review("fx", ModePin, raws(echo, add), nil, nil)
	s.Flush()
	for _, st := range []*Store{s, mustOpen(t, dir)} {
		p := st.Pinned("fx")
		if p == nil || len(p.Tools) != 2 {
			t.Fatalf("pins: %+v", p)
		}
		for name, rec := range p.Tools {
			if rec.Definition != nil || len(rec.SHA256) != 64 {
				t.Errorf("%s held as %+v, want its fingerprint alone", name, rec)
			}
		}
		r := st.Review("fx", ModePin, raws(echoNew), nil, nil)
		old := map[string]string{}
		for _, c := range r.Changes {
			old[c.Name] = string(c.Old)
		}
		if !strings.Contains(old["echo"], "Echo the text.") || !strings.Contains(old["add"], `"Add."`) {
			t.Errorf("changes shown against %q, want the approved definitions", old)
		}
	}
}

func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
