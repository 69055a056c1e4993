package main

import "testing"

func BenchmarkZZConcMcpx(b *testing.B) {
	m := mcpxConn(b)
	for b.Loop() {
		concurrent(b, m, "fx_echo", 64, 8)
	}
}
