package nozero

import (
	"bytes"
	"runtime"
	"testing"
)

// TestMake: the slice holds n bytes without growing, appends are kept,
// and it stays valid across collections.
func TestMake(t *testing.T) {
	if Make(0) != nil {
		t.Error("Make(0) is not nil")
	}
	const n = 3<<20 + 5
	b := Make(n)
	if len(b) != 0 || cap(b) < n {
		t.Fatalf("len %d, cap %d; want 0 and at least %d", len(b), cap(b), n)
	}
	want := bytes.Repeat([]byte("0123456789"), n/10)
	b = append(b, want...)
	runtime.GC()
	if !bytes.Equal(b, want) || cap(b) < n {
		t.Errorf("after appending %d bytes and a collection: %d bytes, cap %d", len(want), len(b), cap(b))
	}
}

// TestMakeAllocs: making the slice allocates it once, and no more
// than n and a size class.
func TestMakeAllocs(t *testing.T) {
	const n = 8 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := Make(n)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got < n || got > n+n/8 {
		t.Errorf("Make(%d) allocated %d bytes", n, got)
	}
	runtime.KeepAlive(b)
}
