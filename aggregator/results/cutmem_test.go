package results

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// TestCutMemory: cutting a 16 MiB text allocates at most one copy of
// it, the text kept: none when nothing in it is escaped (the kept text is
// the answer's own bytes), one decoding when it has escapes. Before, a
// text with nothing escaped was copied once, and one with escapes twice
// (encoding/json's decoded bytes, then the string).
func TestCutMemory(t *testing.T) {
	s := NewStore(&Options{MaxMemory: 64 << 20, MaxDisk: -1})
	defer s.Close()
	for _, c := range []struct {
		name, line string
		most       float64 // bytes allocated per byte of the text
	}{
		{"nothing escaped", "0123456789abcdef", 0.1},
		{"a newline every 16 bytes", "0123456789abcde\n", 1.15}, // room for the raw length
	} {
		text := strings.Repeat(c.line, 1<<20)
		q, _ := json.Marshal(text)
		raw := json.RawMessage(`{"content":[{"type":"text","text":` + string(q) + `}],"structuredContent":{"n":1}}`)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, err := Cut(s, "o", raw, 100<<10, ViaRead)
		runtime.ReadMemStats(&after)
		if err != nil || len(out) > 110<<10 {
			t.Fatalf("%s: %d bytes, %v", c.name, len(out), err)
		}
		per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(text))
		t.Logf("%s: cutting a %d MiB text allocated %.3f bytes per byte of it", c.name, len(text)>>20, per)
		if per > c.most {
			t.Errorf("%s: cutting a %d MiB text allocated %.3f bytes per byte of it, want at most %.2f", c.name, len(text)>>20, per, c.most)
		}
	}
}
