package codemode

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkRunOneCall: a run whose script makes one call of a proxy that
// answers at once, on a VM of its own: the cost of a one-off run (VM,
// prelude, freezing the built-ins, call, value).
func BenchmarkRunOneCall(b *testing.B) {
	answer := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	h := Host{Proxy: func(context.Context, json.RawMessage) json.RawMessage { return answer }}
	for b.Loop() {
		if r := Run(context.Background(), `return await proxy.call("echo", {message: "hi"})`, h, Limits{}); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// BenchmarkEngineOneCall is BenchmarkRunOneCall on an Engine, whose VMs
// serve many runs: each run waits for the check after the one before.
func BenchmarkEngineOneCall(b *testing.B) {
	answer := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	h := Host{Proxy: func(context.Context, json.RawMessage) json.RawMessage { return answer }}
	e := NewEngine(Limits{})
	for b.Loop() {
		if r := e.Run(context.Background(), `return await proxy.call("echo", {message: "hi"})`, h); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}
