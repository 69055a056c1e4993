package codemode

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkRunOneCall: a run whose script makes one call of a proxy that
// answers at once: the cost of code mode itself (VM, prelude, call,
// value).
func BenchmarkRunOneCall(b *testing.B) {
	answer := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	h := Host{Proxy: func(context.Context, json.RawMessage) json.RawMessage { return answer }}
	for b.Loop() {
		if r := Run(context.Background(), `return await proxy.call("echo", {message: "hi"})`, h, Limits{}); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// BenchmarkEngineOneCall is BenchmarkRunOneCall on an Engine, whose
// spare VM is started between runs.
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
