package results

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestReadBackEqualsOriginal(t *testing.T) {
	s := NewStore(0, 0, nil)
	orig := bytes.Repeat([]byte("0123456789abcdef\n"), 300_000/17+1)
	id, err := s.Put("sess", orig)
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 32 {
		t.Fatalf("id %q: want 128 bits in hex", id)
	}
	var got []byte
	for off := int64(0); ; {
		b, total, err := s.Read("sess", id, off, 20_000)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
		off += int64(len(b))
		if off >= total {
			break
		}
	}
	if !bytes.Equal(got, orig) {
		t.Fatal("paged read differs from the original")
	}
}

func TestPrivateToOwner(t *testing.T) {
	s := NewStore(0, 0, nil)
	id, _ := s.Put("a", []byte("secret"))
	if _, _, err := s.Read("b", id, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other session read: err = %v, want ErrNotFound", err)
	}
}

func TestBoundedByBytes(t *testing.T) {
	s := NewStore(100, 0, nil)
	first, _ := s.Put("a", make([]byte, 60))
	second, _ := s.Put("a", make([]byte, 60))
	if s.Size() > 100 {
		t.Fatalf("size %d over the 100-byte bound", s.Size())
	}
	if _, _, err := s.Read("a", first, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("oldest not evicted: %v", err)
	}
	if _, _, err := s.Read("a", second, 0, 0); err != nil {
		t.Fatalf("newest evicted: %v", err)
	}
	if _, err := s.Put("a", make([]byte, 101)); err == nil {
		t.Fatal("a result bigger than the store was kept")
	}
}

func TestBoundedByAge(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewStore(0, time.Hour, func() time.Time { return now })
	id, _ := s.Put("a", []byte("x"))
	now = now.Add(time.Hour + time.Second)
	if _, _, err := s.Read("a", id, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired result still readable: %v", err)
	}
	if s.Size() != 0 {
		t.Fatalf("size %d after expiry", s.Size())
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
