package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkCallTelemetry: what telemetry costs a call. One tools/call of
// echo at a time, round-robin, to mcpx's process (the built binary) with
// nothing configured (off), with tracing and metrics exported over OTLP
// with the default batching (on) to a receiver in this process that
// reads and drops what it gets, and to the copy relay process as the
// baseline of the hop. It reports µs per call of each, on/off, and each
// mcpx's CPU time per call and its ratio (the steadier measure on a
// loaded machine). With MCPX_BENCH_BASE naming an mcpx binary built
// without telemetry (the commit before it), that one is driven too, and
// off/base is the cost of the hooks when nothing is configured.
//
//	go test -run '^$' -bench CallTelemetry -benchtime 2000x ./cmd/mcpx/
func BenchmarkCallTelemetry(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	exe := buildMcpx(b)
	relay := copyProcessConn(b)
	off := envProcessConn(b, exe, nil)
	on := envProcessConn(b, exe, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL})
	conns := []*callConn{relay, off, on}
	if base := os.Getenv("MCPX_BENCH_BASE"); base != "" {
		conns = append(conns, envProcessConn(b, base, nil))
	}
	echo := fmt.Appendf(nil, echoCall, 1, "echo")
	mcpxEcho := fmt.Appendf(nil, echoCall, 1, "fx_echo")
	use := make([]*usageMeter, len(conns))
	for i, c := range conns {
		if i > 0 {
			use[i] = newUsageMeter(c.pid)
		}
	}
	t := make([]time.Duration, len(conns))
	for b.Loop() {
		for i, c := range conns {
			req := mcpxEcho
			if i == 0 {
				req = echo
			}
			if use[i] != nil {
				use[i].run(func() { t[i] += timed(func() { c.call(b, req) }) })
				continue
			}
			t[i] += timed(func() { c.call(b, req) })
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(t[0].Microseconds())/n, "µs/copy")
	b.ReportMetric(float64(t[1].Microseconds())/n, "µs/off")
	b.ReportMetric(float64(t[2].Microseconds())/n, "µs/on")
	b.ReportMetric(float64(t[1])/float64(t[0]), "off/copy")
	b.ReportMetric(float64(t[2])/float64(t[1]), "on/off")
	cpu := func(i int) float64 { c, _ := use[i].perCall(n); return c }
	if use[1].ok && use[2].ok {
		b.ReportMetric(cpu(1), "off-cpuµs/call")
		b.ReportMetric(cpu(2), "on-cpuµs/call")
		b.ReportMetric(cpu(2)/cpu(1), "on/off-cpu")
	}
	if len(conns) > 3 {
		b.ReportMetric(float64(t[3].Microseconds())/n, "µs/base")
		b.ReportMetric(float64(t[1])/float64(t[3]), "off/base")
		b.ReportMetric(float64(t[2])/float64(t[3]), "on/base")
		if use[3].ok && use[1].ok {
			b.ReportMetric(cpu(3), "base-cpuµs/call")
			b.ReportMetric(cpu(1)/cpu(3), "off/base-cpu")
			b.ReportMetric(cpu(2)/cpu(3), "on/base-cpu")
		}
	}
}

// envProcessConn is processConn with env added to the process's
// environment.
func envProcessConn(b testing.TB, exe string, env []string) *callConn {
	top := map[string]any{"expose": "both", "servers": map[string]any{"fx": fx()}}
	cmd := exec.Command(exe, "serve", "--stdio", "--config", writeConfig(b, top))
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+b.TempDir())
	cmd.Env = append(cmd.Env, env...)
	c := stdioConn(b, cmd)
	c.call(b, fmt.Appendf(nil, echoCall, 0, "fx_echo")) // waits for the upstream
	return c
}
