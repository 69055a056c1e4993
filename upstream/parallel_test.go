package upstream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
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

// TestParallelStartIsParallel checks that servers start side by side:
// eight servers that cannot answer initialize until a gate opens are all
// running before it opens. A starter that waited for each server in turn
// would have started only the first.
func TestParallelStartIsParallel(t *testing.T) {
	dir := t.TempDir()
	gate, pids := filepath.Join(dir, "gate"), filepath.Join(dir, "pids")
	if err := os.Mkdir(pids, 0o755); err != nil {
		t.Fatal(err)
	}
	servers := make([]config.Server, 8)
	for i := range servers {
		servers[i] = stdioServer(fmt.Sprintf("gated-%d", i), "--init-gate", gate, "--pid-dir", pids)
	}
	clients := upstream.StartAll(context.Background(), servers, fastOptions())
	defer upstream.CloseAll(clients)
	testenv.Eventually(t, 30*time.Second, func() bool {
		entries, err := os.ReadDir(pids)
		if err != nil {
			t.Fatal(err)
		}
		return len(entries) == len(servers)
	}, "not all %d servers started while the first could not finish initialize", len(servers))
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	upstream.WaitReady(ctx, clients)
	for _, c := range clients {
		if st := c.Status(); st.State != upstream.StateConnected {
			t.Errorf("%s: state %s (%s), want connected", st.Name, st.State, st.Err)
		}
	}
}
