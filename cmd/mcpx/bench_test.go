package main

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkListToolsParallelStart runs `mcpx list tools` over 1 and over 8
// upstreams that each take 300 ms to initialize, in the same run, and
// reports the ratio: upstreams start in parallel, so it must stay far
// below 8.
func BenchmarkListToolsParallelStart(b *testing.B) {
	config := func(n int) string {
		servers := map[string]any{}
		for i := range n {
			servers[fmt.Sprintf("slow%d", i)] = fx("--init-delay", "300ms")
		}
		return writeConfig(b, map[string]any{"servers": servers})
	}
	one, eight := config(1), config(8)
	list := func(cfg string) time.Duration {
		start := time.Now()
		if _, errOut, code := runCLI(b, "", "list", "tools", "--config", cfg); code != 0 {
			b.Fatalf("list tools: exit %d: %s", code, errOut)
		}
		return time.Since(start)
	}
	var t1, t8 time.Duration
	for b.Loop() {
		t1 += list(one)
		t8 += list(eight)
	}
	b.ReportMetric(float64(t1.Milliseconds())/float64(b.N), "ms/list-1")
	b.ReportMetric(float64(t8.Milliseconds())/float64(b.N), "ms/list-8")
	b.ReportMetric(float64(t8)/float64(t1), "ratio-8:1")
}
