package audit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	old := time.Now().Add(-2 * time.Hour)
	var calls []Call
	for i := range 30 {
		start, server := time.Now(), "a"
		if i < 10 {
			start = old
		}
		if i%2 == 1 {
			server = "b"
		}
		calls = append(calls, Call{Start: start, Server: server, Method: "tools/call", Params: json.RawMessage(`{"name":"t"}`)})
	}
	record(t, Options{Path: path, MaxBytes: 1500}, calls...) // rotates: the lines span files
	f := Filter{Server: "b", Since: time.Now().Add(-time.Hour)}
	var got []Line
	if err := Read(path, func(l Line) error {
		if f.Match(l) {
			got = append(got, l)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("no rotation to read across: %v", err)
	}
	if len(got) == 0 || len(got) > 10 {
		t.Fatalf("%d lines, want the recent ones of b (at most 10)", len(got))
	}
	for _, l := range got {
		if l.Server != "b" || l.Time.Before(f.Since) {
			t.Errorf("line %+v passed the filter", l)
		}
	}
}

// TestFollowPartialLine: a line written in two pieces comes out once,
// whole, after its second piece.
func TestFollowPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line, _ := json.Marshal(Line{Server: "first"})
	w.Write(append(line, '\n'))
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Line, 10)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, 10*time.Millisecond, func(l Line) error { got <- l; return nil })
	}()
	deadline := time.After(10 * time.Second)
	next := func() Line {
		select {
		case l := <-got:
			return l
		case <-deadline:
			t.Fatal("no line within 10s")
			return Line{}
		}
	}
	if l := next(); l.Server != "first" {
		t.Fatalf("first line %+v", l)
	}
	line, _ = json.Marshal(Line{Server: "second"})
	w.Write(line[:10])
	w.Sync()
	w.Write(append(line[10:], '\n'))
	if l := next(); l.Server != "second" {
		t.Fatalf("second line %+v", l)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
