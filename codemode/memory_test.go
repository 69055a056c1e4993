package codemode

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rssBytes is this process's resident set, from /proc.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("needs /proc/self/status to measure memory: %v", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := strings.Fields(string(line)); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// TestRunMemory: scripts that reach for a GiB fail inside the run's
// memory limit, and the process never holds much more than the limit
// while they try.
func TestRunMemory(t *testing.T) {
	const limit = 64 << 20
	scripts := []string{
		`new ArrayBuffer(1 << 30).byteLength`,
		`const a = []; for (;;) a.push("x".repeat(1000) + a.length)`,
		`let s = "x".repeat((1 << 29) - 1); return (s + s).length`,
		`const a = []; for (let i = 0; i < 1 << 28; i++) a.push({i}); return a.length`,
		`new Array(1 << 27).fill(1.5).length`,
	}
	for _, code := range scripts {
		t.Run(code, func(t *testing.T) {
			base := rssBytes(t)
			var peak atomic.Int64
			done := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					if r := rssBytes(t); r > peak.Load() {
						peak.Store(r)
					}
					select {
					case <-done:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			// The time limit is far off: what is tested is memory, and a
			// loaded machine under the race detector takes half a minute to
			// fill 64 MiB with small objects.
			r, _ := runScript(t, code, Limits{Memory: limit, Timeout: 10 * time.Minute})
			close(done)
			<-sampled
			if r.Err == nil {
				t.Fatalf("the script ran and gave %s", r.Value)
			}
			if !strings.Contains(r.Err.Error(), "memory") && !strings.Contains(r.Err.Error(), "length") {
				t.Errorf("err %q does not say memory ran out", r.Err)
			}
			// The engine's heap is the limit; the rest is headroom for the
			// Go runtime and the race detector's shadow of it.
			if grew := peak.Load() - base; grew > 2*limit {
				t.Errorf("the process grew %d MiB during the run, over twice the %d MiB limit", grew>>20, limit>>20)
			}
		})
	}
	if r, _ := runScript(t, `"still works"`, Limits{Memory: limit}); r.Err != nil {
		t.Errorf("a run after the failed ones: %v", r.Err)
	}
}
