package upstream

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
)

// BenchmarkCallEra: one tools/call at a time on the stdio hot path
// (Client.Send) to the same upstream, the Go SDK's dual-era reference
// server, connected once in each era by its protocol key: modern
// (server/discover, _meta spliced into every request) and legacy
// (initialize). The eras take turns in rounds of 100
// calls, so that both see the same machine; it reports µs per call of
// each and modern/legacy.
//
//	go test -run '^$' -bench CallEra -benchtime 2000x ./upstream/
func BenchmarkCallEra(b *testing.B) {
	reference := testenv.GoTool(b, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	cfg := config.Server{Name: "gosdk", Transport: config.TransportStdio, Command: reference, Enabled: true, Timeout: 10 * time.Second}
	dial := func(protocol config.Protocol) *Client {
		cfg := cfg
		cfg.Protocol = protocol
		c := New(cfg, nil)
		c.Start(context.Background())
		b.Cleanup(func() { c.Close() })
		<-c.Ready()
		if st := c.Status(); st.State != StateConnected {
			b.Fatalf("connect: %s %s", st.State, st.Err)
		}
		return c
	}
	modern := dial(config.ProtocolModern)
	legacy := dial(config.ProtocolLegacy)
	if e := EraOf(modern.Status().ProtocolVersion); e != EraModern {
		b.Fatalf("the first connection is %s, want modern", e)
	}
	if e := EraOf(legacy.Status().ProtocolVersion); e != EraLegacy {
		b.Fatalf("the second connection is %s, want legacy", e)
	}

	params := json.RawMessage(`{"name":"test_simple_text","arguments":{}}`)
	ctx := context.Background()
	done := make(chan error, 1)
	call := func(c *Client) {
		_, ok := c.Send(ctx, "tools/call", params, nil, func(_ json.RawMessage, err error) { done <- err })
		if !ok {
			b.Fatal("Send refused a connected stdio server")
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	for range 50 { // warm both
		call(modern)
		call(legacy)
	}
	const round = 100
	var took [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i += round {
		n := min(round, b.N-i)
		for j, c := range []*Client{legacy, modern} {
			start := time.Now()
			for range n {
				call(c)
			}
			took[j] += time.Since(start)
		}
	}
	b.StopTimer()
	perCall := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(perCall(took[0]), "µs/legacy-call")
	b.ReportMetric(perCall(took[1]), "µs/modern-call")
	b.ReportMetric(float64(took[1])/float64(took[0]), "modern/legacy")
	b.ReportMetric(0, "ns/op") // both eras run in each op: per call is above
}
