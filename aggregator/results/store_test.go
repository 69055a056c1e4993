package results

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func text(b []byte) Kept { return Kept{MIMEType: "text/plain", Data: b} }

// readAll reads the result id back in slices of page bytes.
func readAll(t *testing.T, s *Store, owner, id string, page int64) []byte {
	t.Helper()
	var got []byte
	for {
		sl, err := s.Read(owner, id, int64(len(got)), page)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sl.Data...)
		if int64(len(got)) >= sl.Total {
			return got
		}
	}
}

func TestReadBackEqualsOriginal(t *testing.T) {
	s := NewStore(nil)
	defer s.Close()
	orig := bytes.Repeat([]byte("0123456789abcdef\n"), 300_000/17+1)
	id, err := s.Put("sess", text(orig))
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 32 {
		t.Fatalf("id %q: want 128 bits in hex", id)
	}
	if got := readAll(t, s, "sess", id, 20_000); !bytes.Equal(got, orig) {
		t.Fatal("paged read differs from the original")
	}
}

func TestPrivateToOwner(t *testing.T) {
	s := NewStore(nil)
	defer s.Close()
	id, _ := s.Put("a", text([]byte("secret")))
	if _, err := s.Read("b", id, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other session read: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Read(AnyHolder, id, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read as AnyHolder of a session's result: err = %v, want ErrNotFound", err)
	}
	open, _ := s.Put(AnyHolder, text([]byte("shared")))
	for _, who := range []string{"a", "b", ""} {
		if sl, err := s.Read(who, open, 0, 0); err != nil || string(sl.Data) != "shared" {
			t.Errorf("read by %q of a result kept for any holder: %q, %v", who, sl.Data, err)
		}
	}
}

// TestSpillsToDisk: past the memory bound the least recently used
// results move to files of their own in a private directory, read back
// whole; past the disk bound the oldest go; Close removes the directory.
func TestSpillsToDisk(t *testing.T) {
	s := NewStore(&Options{MaxMemory: 100, MaxDisk: 250, Dir: t.TempDir()})
	data := func(c byte) []byte { return bytes.Repeat([]byte{c}, 60) }
	var ids []string
	for c := byte('a'); c <= 'f'; c++ {
		id, err := s.Put("o", text(data(c)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if mem, disk := s.Size(); mem > 100 || disk > 250 {
			t.Fatalf("after %c: %d bytes in memory, %d on disk, over 100 and 250", c, mem, disk)
		}
	}
	if mem, disk := s.Size(); mem != 60 || disk != 240 {
		t.Fatalf("%d bytes in memory, %d on disk; want the newest 60 in memory, the next four on disk", mem, disk)
	}
	// Six of 60: f in memory, b..e fill 240 of the disk's 250, a is gone.
	if _, err := s.Read("o", ids[0], 0, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("oldest result still kept past both bounds: %v", err)
	}
	for i, id := range ids[1:] {
		if got := readAll(t, s, "o", id, 7); !bytes.Equal(got, data(byte('b'+i))) {
			t.Errorf("result %c read back as %q", 'b'+i, got)
		}
	}
	s.mu.Lock()
	dir := s.dir
	s.mu.Unlock()
	checkMode(t, dir, 0o700)
	files, _ := os.ReadDir(dir)
	if len(files) != 4 {
		t.Errorf("%d files on disk, want 4", len(files))
	}
	for _, f := range files {
		checkMode(t, filepath.Join(dir, f.Name()), 0o600)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory %s still there after Close: %v", dir, err)
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
	}
}

// TestLargerThanMemory: a result larger than the memory bound goes to
// disk and reads back; one larger than both is refused; with the disk off
// the memory bound alone decides.
func TestLargerThanMemory(t *testing.T) {
	s := NewStore(&Options{MaxMemory: 100, MaxDisk: 1000, Dir: t.TempDir()})
	defer s.Close()
	big := bytes.Repeat([]byte("x"), 500)
	id, err := s.Put("o", text(big))
	if err != nil {
		t.Fatal(err)
	}
	if mem, _ := s.Size(); mem != 0 {
		t.Errorf("%d bytes in memory after a result over the memory bound", mem)
	}
	if got := readAll(t, s, "o", id, 64); !bytes.Equal(got, big) {
		t.Error("result over the memory bound read back differs")
	}
	if _, err := s.Put("o", text(make([]byte, 1001))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("result over both bounds: %v, want ErrTooLarge", err)
	}
	mem := NewStore(&Options{MaxMemory: 100, MaxDisk: -1})
	first, _ := mem.Put("a", text(make([]byte, 60)))
	second, _ := mem.Put("a", text(make([]byte, 60)))
	if _, err := mem.Read("a", first, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("disk off: oldest not dropped: %v", err)
	}
	if _, err := mem.Read("a", second, 0, 0); err != nil {
		t.Errorf("disk off: newest dropped: %v", err)
	}
	if _, err := mem.Put("a", text(make([]byte, 101))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("disk off, result over memory: %v, want ErrTooLarge", err)
	}
	if mem.dir != "" {
		t.Errorf("disk off, yet a directory %s", mem.dir)
	}
}

func TestBoundedByAge(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewStore(&Options{MaxMemory: 10, MaxAge: time.Hour, Dir: t.TempDir(), Now: func() time.Time { return now }})
	defer s.Close()
	id, _ := s.Put("a", text([]byte("x")))
	onDisk, _ := s.Put("a", text([]byte("0123456789abcdef")))
	now = now.Add(time.Hour + time.Second)
	for _, id := range []string{id, onDisk} {
		if _, err := s.Read("a", id, 0, 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("expired result still readable: %v", err)
		}
	}
	if mem, disk := s.Size(); mem != 0 || disk != 0 {
		t.Fatalf("%d bytes in memory, %d on disk after expiry", mem, disk)
	}
	files, _ := os.ReadDir(s.dir)
	if len(files) != 0 {
		t.Errorf("%d files left after expiry", len(files))
	}
}

func TestCutText(t *testing.T) {
	text := strings.Repeat("line\n", 10) // 50 bytes
	kept, cutB, cutL := CutText(text, 23)
	if kept != strings.Repeat("line\n", 4) || cutB != 30 || cutL != 6 {
		t.Fatalf("CutText = %q, %d, %d", kept, cutB, cutL)
	}
	if kept, _, _ := CutText("short", 100); kept != "short" {
		t.Fatalf("under the cap changed: %q", kept)
	}
	if kept, cutB, _ := CutText(strings.Repeat("x", 50), 20); len(kept) != 20 || cutB != 30 {
		t.Fatalf("one long line: kept %d, cut %d", len(kept), cutB)
	}
}

// TestReplicaInID: a store named as a replica starts every ID with the
// name and "~" (escaped as a URI path segment), reads its own back by URI
// (the next slices' URIs naming it too) for its owner alone, and refuses
// another replica's ID with ErrElsewhere naming that replica, where a
// load balancer should have sent the read.
func TestReplicaInID(t *testing.T) {
	orig := bytes.Repeat([]byte("0123456789abcdef\n"), 2000)
	for _, tc := range []struct{ name, prefix string }{
		{"a", "a~"},
		{"eu-1:7701", "eu-1:7701~"},
		{"x/y z", "x%2Fy%20z~"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A tiny MaxMemory sends the result to disk, where the ID
			// names its file.
			s := NewStore(&Options{Replica: tc.name, MaxMemory: 100, Dir: t.TempDir()})
			defer s.Close()
			k := text(orig)
			k.Cap = 4096
			id, err := s.Put("o", k)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(id, tc.prefix) || len(id) != len(tc.prefix)+32 {
				t.Fatalf("id %q: want %q and 128 bits in hex", id, tc.prefix)
			}
			got, reads := readOn(t, s, URIPrefix+id, 0, 4096)
			if !bytes.Equal(got, orig) || reads < 2 {
				t.Fatalf("read back by URI in %d reads: %d bytes, want the original's %d", reads, len(got), len(orig))
			}
			if _, err := s.Read("other", id, 0, 0); !errors.Is(err, ErrNotFound) {
				t.Errorf("another owner's read: err = %v, want ErrNotFound", err)
			}
			if _, err := s.Read("o", "zz~"+strings.TrimPrefix(id, tc.prefix), 0, 0); !errors.Is(err, ErrElsewhere) ||
				!strings.Contains(err.Error(), `"zz"`) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.name)) {
				t.Errorf("read of replica zz's ID: err = %v, want ErrElsewhere naming zz and this replica", err)
			}
		})
	}
	// An unnamed store makes IDs as before, and names the replica of
	// an ID that has one.
	s := NewStore(nil)
	defer s.Close()
	id, _ := s.Put("o", text([]byte("x")))
	if len(id) != 32 {
		t.Errorf("unnamed store's id %q: want 128 bits in hex alone", id)
	}
	if _, err := s.Read("o", "a~"+id, 0, 0); !errors.Is(err, ErrElsewhere) || !strings.Contains(err.Error(), `"a", not this one (unnamed)`) {
		t.Errorf("unnamed store's read of replica a's ID: %v", err)
	}
}
