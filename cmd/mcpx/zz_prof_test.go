package main

import (
	"fmt"
	"testing"
)

func BenchmarkZZMcpxOnly(b *testing.B) {
	mcpx := mcpxConn(b)
	mcpxEcho := fmt.Appendf(nil, echoCall, 1, "fx_echo")
	for b.Loop() {
		mcpx.call(b, mcpxEcho)
	}
}
