//go:build unix

package aggregator

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/frame"
	"github.com/mcpx/mcpx/internal/testenv"
	// The test binary is the supervisor of the fixture it starts.
	_ "github.com/mcpx/mcpx/upstream/supervisor/takeover"
)

// The era benchmarks measure one tools/call of the Go fixture's echo
// through one Aggregator, in this process so that a profile sees all of
// mcpx, from a legacy session (initialize, then calls) and from a modern
// client (no initialize, each call carrying its _meta), both served over
// OS pipes by ServeStdio against the same upstream process.
//
//	go test -run '^$' -bench EraCall -benchtime 3000x ./aggregator/
//	go test -run '^$' -bench EraCall/modern -cpuprofile cpu.out ./aggregator/
//
// cmd/mcpx's BenchmarkCallModern measures the same over OS pipes, with
// mcpx run as `serve --stdio`.

const (
	benchLegacyCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"hi"}}}` + "\n"
	benchModernCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"hi"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
	// benchAskableCall is benchModernCall of a client that can be asked
	// for input (elicitation): its call goes through the bridge between
	// the eras, ready to turn a question into input_required.
	benchAskableCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"hi"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}` + "\n"
)

// eraConn is one client of ServeStdio: it writes a request line and reads
// the answer, reusing its buffers.
type eraConn struct {
	w io.Writer
	r *frame.Reader
}

// call sends req and returns the answer, which must be a result.
func (c *eraConn) call(tb testing.TB, req string) []byte {
	if _, err := io.WriteString(c.w, req); err != nil {
		tb.Fatalf("write: %v", err)
	}
	for {
		line, err := c.r.Next()
		if err != nil {
			tb.Fatalf("read: %v", err)
		}
		if bytes.Contains(line, []byte(`"method"`)) && !bytes.Contains(line, []byte(`"result"`)) {
			continue // a notification
		}
		if !bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"isError":true`)) {
			tb.Fatalf("not a result: %.300s", line)
		}
		return line
	}
}

// eraAggregator starts an Aggregator serving the fixture as server fx
// (tools fx_*), ready.
func eraAggregator(tb testing.TB) *Aggregator {
	fixture := testenv.GoTool(tb, "./testdata/fixture")
	cfg, err := config.Parse("bench.json", fmt.Appendf(nil,
		`{"expose":"direct","maxResultBytes":"off","servers":{"fx":{"command":%q,"args":["--name","bench"],"timeout":"10s"}}}`, fixture), nil)
	if err != nil {
		tb.Fatal(err)
	}
	a := New(cfg, &Options{Serving: true, Version: "bench"})
	ctx, cancel := context.WithCancel(context.Background())
	a.Start(ctx)
	tb.Cleanup(func() { cancel(); _ = a.Close() })
	if err := a.WaitReady(ctx); err != nil {
		tb.Fatal(err)
	}
	return a
}

// eraServe serves a to one more client over OS pipes, as serve --stdio
// is served (an answer is written at once where the pipe allows it).
func eraServe(tb testing.TB, a *Aggregator) *eraConn {
	inR, inW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = a.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	tb.Cleanup(func() {
		inW.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		<-done
		inR.Close()
		outR.Close()
	})
	return &eraConn{w: inW, r: frame.NewReader(outR, 0)}
}

// eraConns are a legacy session, initialized, and a modern client, each
// having made one call.
func eraConns(tb testing.TB) (legacy, modern *eraConn) {
	a := eraAggregator(tb)
	legacy, modern = eraServe(tb, a), eraServe(tb, a)
	legacy.call(tb, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
	if _, err := io.WriteString(legacy.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	legacy.call(tb, benchLegacyCall)
	if got := modern.call(tb, benchModernCall); !bytes.Contains(got, []byte(`"resultType":"complete"`)) {
		tb.Fatalf("a modern answer without resultType: %s", got)
	}
	return legacy, modern
}

// BenchmarkEraCall: legacy and modern each on their own (for a profile of
// one), and both in turn in the same run, which reports the median µs of
// each, their ratio modern/legacy (issue 30 bounds it at 1.05), the
// ratio of this process's CPU time per call (cpu-modern/legacy: mcpx and
// the client, which does the same for both, without the waits for a CPU
// that a shared machine adds to the times) and the allocations a modern
// call makes beyond a legacy one.
func BenchmarkEraCall(b *testing.B) {
	legacy, modern := eraConns(b)
	b.Run("legacy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			legacy.call(b, benchLegacyCall)
		}
	})
	b.Run("modern", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			modern.call(b, benchModernCall)
		}
	})
	b.Run("askable", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			modern.call(b, benchAskableCall)
		}
	})
	b.Run("both", func(b *testing.B) {
		calls := []func(){
			func() { legacy.call(b, benchLegacyCall) },
			func() { modern.call(b, benchModernCall) },
		}
		// Medians: on a shared machine a few calls wait milliseconds for
		// the CPU, which says more about the neighbours than the call.
		var times [2][]time.Duration
		var cpu [2]time.Duration
		round := 0
		for b.Loop() {
			for k := range calls {
				i := (round + k) % len(calls)
				c0, start := cpuTime(b), time.Now()
				calls[i]()
				times[i] = append(times[i], time.Since(start))
				cpu[i] += cpuTime(b) - c0
			}
			round++
		}
		legacyAllocs := testing.AllocsPerRun(500, calls[0])
		modernAllocs := testing.AllocsPerRun(500, calls[1])
		l, m := eraMedian(times[0]), eraMedian(times[1])
		b.ReportMetric(float64(l.Nanoseconds())/1e3, "µs/legacy")
		b.ReportMetric(float64(m.Nanoseconds())/1e3, "µs/modern")
		b.ReportMetric(float64(m)/float64(l), "modern/legacy")
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-modern/legacy")
		b.ReportMetric(modernAllocs-legacyAllocs, "modern-extra-allocs/call")
	})
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// eraMedian is the middle of ds, which it sorts.
func eraMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
