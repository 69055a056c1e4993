package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLargeStart starts `mcpx serve --stdio` over 1,000 fixture
// servers of 10 tools each (MCPX_BENCH_SERVERS sets another count), with
// every default feature on (pinning into a state directory of the
// run's own), twice: the first start (nothing pinned, nothing
// remembered) and the second (both). For each it reports the time to
// answer initialize, against the same time over 1 server in the same run
// (ratio-init-first:1), the time to a complete tools/list, and the RSS
// of mcpx's own processes once idle: the root's and the supervisor's per
// tool, less what they hold with 8 servers measured in the same run. With
// MCPX_BENCH_BASE naming another mcpx binary, that one's two starts are
// measured too (ms-init-*-base, KiB-rss-per-tool-*-base). Linux only (it
// reads /proc); it runs as many processes as servers.
//
//	go test -run '^$' -bench LargeStart -benchtime 1x ./cmd/mcpx/
func BenchmarkLargeStart(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Fatal("reads /proc: Linux only")
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MCPX_BENCH_SERVERS")); err == nil && v > 0 {
		n = v
	}
	exe := buildMcpx(b)
	one, eight, large := largeConfig(b, 1), largeConfig(b, 8), largeConfig(b, n)
	tools := n * fixtureTools
	run := func(exe, cfg, cache, state string, tools int) largeStart {
		return measureStart(b, exe, cfg, cache, state, tools)
	}
	perTool := func(s, base largeStart) (root, sup float64) { return s.perTool(base, tools) }
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	base := os.Getenv("MCPX_BENCH_BASE")
	for b.Loop() {
		small := run(exe, eight, "", "", 8*fixtureTools)
		single := run(exe, one, "", "", fixtureTools)
		cache, state := b.TempDir(), b.TempDir()
		first := run(exe, large, cache, state, tools)
		second := run(exe, large, cache, state, tools)
		b.ReportMetric(ms(first.init), "ms-init-first")
		b.ReportMetric(ms(second.init), "ms-init-second")
		b.ReportMetric(ms(single.init), "ms-init-1")
		b.ReportMetric(float64(first.init)/float64(single.init), "ratio-init-first:1")
		b.ReportMetric(float64(second.init)/float64(single.init), "ratio-init-second:1")
		b.ReportMetric(first.catalog.Seconds(), "s-catalog-first")
		b.ReportMetric(second.catalog.Seconds(), "s-catalog-second")
		r, s := perTool(first, small)
		b.ReportMetric(r, "KiB-root-per-tool-first")
		b.ReportMetric(s, "KiB-supervisor-per-tool-first")
		r, s = perTool(second, small)
		b.ReportMetric(r, "KiB-root-per-tool-second")
		b.ReportMetric(s, "KiB-supervisor-per-tool-second")
		b.ReportMetric(second.root, "MiB-root-second")
		if base != "" {
			smallBase := run(base, eight, "", "", 8*fixtureTools)
			cache, state := b.TempDir(), b.TempDir()
			first := run(base, large, cache, state, tools)
			second := run(base, large, cache, state, tools)
			b.ReportMetric(ms(first.init), "ms-init-first-base")
			b.ReportMetric(ms(second.init), "ms-init-second-base")
			r, s := perTool(first, smallBase)
			b.ReportMetric(r+s, "KiB-rss-per-tool-first-base")
			r, s = perTool(second, smallBase)
			b.ReportMetric(r+s, "KiB-rss-per-tool-second-base")
		}
	}
}

// largeConfig is the config of n fixture servers, every tool exposed.
func largeConfig(tb testing.TB, n int) string {
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"command": fixture, "args": []string{"--name", fmt.Sprintf("s%d", i)}, "timeout": "120s"}
	}
	return writeConfig(tb, map[string]any{"expose": "direct", "servers": servers})
}

// largeStart is what measureStart measured of one start.
type largeStart struct {
	init, catalog time.Duration
	root, sup     float64 // MiB, idle
}

// perTool is the RSS per tool, in KiB, of the root and of the
// supervisor, less what they hold in base.
func (s largeStart) perTool(base largeStart, tools int) (root, sup float64) {
	return (s.root - base.root) * 1024 / float64(tools), (s.sup - base.sup) * 1024 / float64(tools)
}

// measureStart starts exe serving cfg over stdio with cache and state
// (both "" for new ones) and measures it once its catalog holds tools
// and it idles.
func measureStart(tb testing.TB, exe, cfg, cache, state string, tools int) largeStart {
	tb.Helper()
	if cache == "" {
		cache = tb.TempDir()
	}
	if state == "" {
		state = tb.TempDir()
	}
	cmd := exec.Command(exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "XDG_STATE_HOME="+state, "MCPX_TRUST=")
	t0 := time.Now()
	p, err := startPeer(cmd)
	if err != nil {
		tb.Fatalf("mcpx: %v", err)
	}
	defer p.close()
	s := largeStart{init: time.Since(t0)}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		got, err := p.listTools()
		if err != nil {
			tb.Fatalf("mcpx: %v", err)
		}
		if got >= tools {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d tools listed after 10 minutes, want %d", got, tools)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.catalog = time.Since(t0)
	// At rest: serve gives the start's garbage back once the catalog
	// has stayed the same for settleQuiet.
	time.Sleep(settleQuiet + 3*time.Second)
	for i, pid := range ownProcesses(p.cmd.Process.Pid, exe) {
		r, _ := memoryOf(tb, pid)
		if i == 0 {
			s.root = r
		} else {
			s.sup += r
		}
	}
	return s
}
