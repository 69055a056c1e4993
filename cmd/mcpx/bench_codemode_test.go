package main

import (
	"fmt"
	"testing"
	"time"
)

// runCall is a tools/call of the proxy's run action whose script makes
// the one call proxyCall makes, and returns its value.
const runCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"proxy","arguments":{"action":"run","code":"return await proxy.call('fx_echo', {message: 'hi'})"}}}` + "\n"

// BenchmarkCodeModeOneCall: what a script costs over the call it makes,
// in the same run against the same fixture: the proxy's call action,
// and a run whose script makes that one call (the script on a kept
// QuickJS VM, the call, the value). The target is run/call at most 1.5.
//
//	go test -run '^$' -bench CodeModeOneCall -benchtime 300x ./cmd/mcpx/
func BenchmarkCodeModeOneCall(b *testing.B) {
	mcpx := mcpxConn(b)
	call := fmt.Appendf(nil, proxyCall, 1)
	run := fmt.Appendf(nil, runCall, 1)
	var t [2]time.Duration
	for b.Loop() {
		t[0] += timed(func() { mcpx.call(b, call) })
		t[1] += timed(func() { mcpx.call(b, run) })
	}
	n := float64(b.N)
	b.ReportMetric(float64(t[0].Microseconds())/n, "µs/call")
	b.ReportMetric(float64(t[1].Microseconds())/n, "µs/run")
	b.ReportMetric(float64(t[1])/float64(t[0]), "run/call")
}
