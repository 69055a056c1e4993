package upstream_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// slowServers are n fixtures that each take 300ms to answer initialize.
func slowServers(n int) []config.Server {
	servers := make([]config.Server, n)
	for i := range servers {
		servers[i] = stdioServer(fmt.Sprintf("slow-%d", i), "--init-delay", "300ms")
	}
	return servers
}

// startReady starts the servers together and returns them with how long it
// took until all were ready, failing unless all connected. The caller
// closes them.
func startReady(tb testing.TB, servers []config.Server) ([]*upstream.Client, time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	clients := upstream.StartAll(context.Background(), servers, fastOptions())
	upstream.WaitReady(ctx, clients)
	elapsed := time.Since(start)
	for _, c := range clients {
		if st := c.Status(); st.State != upstream.StateConnected {
			upstream.CloseAll(clients)
			tb.Fatalf("%s: state %s (%s), want connected", st.Name, st.State, st.Err)
		}
	}
	return clients, elapsed
}

func BenchmarkParallelStart(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			servers := slowServers(n)
			for b.Loop() {
				clients, _ := startReady(b, servers)
				b.StopTimer()
				upstream.CloseAll(clients)
				b.StartTimer()
			}
		})
	}
}

// TestParallelStartIsParallel checks that servers start side by side: 8
// slow servers are ready in much less than 8 times one. It does not run in
// parallel with other tests, which would make its timing noise.
func TestParallelStartIsParallel(t *testing.T) {
	clients, one := startReady(t, slowServers(1))
	upstream.CloseAll(clients)
	clients, eight := startReady(t, slowServers(8))
	upstream.CloseAll(clients)
	t.Logf("ready: 1 server in %s, 8 servers in %s", one.Round(time.Millisecond), eight.Round(time.Millisecond))
	if eight >= 3*one {
		t.Errorf("8 servers took %s, not less than 3 times one server (%s)", eight, one)
	}
}
