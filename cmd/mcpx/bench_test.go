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

// BenchmarkProxyCallVsDirect calls the same upstream tool through
// `mcpx serve --stdio`, once directly by its prefixed name and once through
// the proxy tool, in the same run, and reports the proxy's cost as a ratio.
func BenchmarkProxyCallVsDirect(b *testing.B) {
	cfg := writeConfig(b, map[string]any{"expose": "both", "servers": map[string]any{"fx": fx()}})
	c := startServe(b, cfg)
	c.initialize()
	c.request("tools/list", map[string]any{})
	direct := map[string]any{"name": "fx_echo", "arguments": map[string]any{"message": "hi"}}
	proxied := map[string]any{"name": "proxy", "arguments": map[string]any{
		"action": "call", "type": "tool", "path": "fx_echo", "args": map[string]any{"message": "hi"}}}
	call := func(params map[string]any) time.Duration {
		start := time.Now()
		if _, e := c.request("tools/call", params); e != nil {
			b.Fatalf("call: %s", e.Message)
		}
		return time.Since(start)
	}
	call(direct)
	call(proxied)
	var td, tp time.Duration
	for b.Loop() {
		td += call(direct)
		tp += call(proxied)
	}
	b.ReportMetric(float64(td.Microseconds())/float64(b.N), "µs/direct")
	b.ReportMetric(float64(tp.Microseconds())/float64(b.N), "µs/proxy")
	b.ReportMetric(float64(tp)/float64(td), "ratio-proxy:direct")
}

// BenchmarkCallThroughMcpxVsDirect calls the fixture's echo tool over a
// direct stdio connection and through `mcpx serve --stdio`, in the same
// run, and reports what mcpx adds as a ratio.
func BenchmarkCallThroughMcpxVsDirect(b *testing.B) {
	cfg := writeConfig(b, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx()}})
	c := startServe(b, cfg)
	c.initialize()
	c.request("tools/list", map[string]any{})
	d := directFixture(b)
	viaMcpx := func() time.Duration {
		start := time.Now()
		if _, e := c.request("tools/call", map[string]any{"name": "fx_echo", "arguments": map[string]any{"message": "hi"}}); e != nil {
			b.Fatal(e.Message)
		}
		return time.Since(start)
	}
	direct := func() time.Duration {
		start := time.Now()
		d.request(b, "tools/call", `{"name":"echo","arguments":{"message":"hi"}}`)
		return time.Since(start)
	}
	var tm, td time.Duration
	for b.Loop() {
		td += direct()
		tm += viaMcpx()
	}
	b.ReportMetric(float64(td.Microseconds())/float64(b.N), "µs/direct")
	b.ReportMetric(float64(tm.Microseconds())/float64(b.N), "µs/mcpx")
	b.ReportMetric(float64(tm)/float64(td), "ratio-mcpx:direct")
}
