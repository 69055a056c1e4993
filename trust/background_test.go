package trust

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store opened in the background reviews, pins and approves as one
// Open read: each waits for the file.
func TestBackgroundOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Review("fx", ModePin, raws(echo, add), raws(greet), nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	bg, err := Open(dir, &Options{Background: true})
	if err != nil {
		t.Fatal(err)
	}
	r := bg.Review("fx", ModePin, raws(echoNew, add), raws(greet), nil)
	if !r.Pinned || len(r.Changes) != 1 || r.Changes[0].Name != "echo" || r.Changes[0].Status != Changed {
		t.Fatalf("review of a store opened in the background: %+v", r)
	}
	if err := bg.Loaded(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := bg.Pinned("fx"); p == nil || len(p.Tools) != 2 {
		t.Fatalf("pins read in the background: %+v", p)
	}
}

// A file that is not a pin file fails a store opened in the background:
// Loaded names the file, every definition reviewed is new (withheld in
// mode pin), an approval is refused, and nothing is written over the
// file, which the user may still fix.
func TestBackgroundOpenBadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	bad := []byte(`{"version": 1, "servers": [`)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a bad file: %v, want an error naming %s", err, path)
	}
	s, err := Open(dir, &Options{Background: true})
	if err != nil {
		t.Fatalf("Open in the background: %v", err)
	}
	if err := s.Loaded(context.Background()); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Loaded: %v, want an error naming %s", err, path)
	}
	r := s.Review("fx", ModePin, raws(echo, add), raws(greet), nil)
	for _, name := range []string{"echo", "add"} {
		if _, ok := r.Withheld(Tool, name); !ok {
			t.Errorf("%s served from a store whose pins cannot be read: %+v", name, r.Changes)
		}
	}
	if _, ok := r.Withheld(Prompt, "greet"); !ok {
		t.Errorf("prompt greet served: %+v", r.Changes)
	}
	if err := s.Approve(r); err == nil {
		t.Error("an approval over an unreadable pin file was accepted")
	}
	s.Flush()
	if err := s.Close(); err == nil {
		t.Error("Close of a store whose pins cannot be read reported nothing")
	}
	if got, _ := os.ReadFile(path); string(got) != string(bad) {
		t.Errorf("the bad pin file was written over: %q", got)
	}
}
