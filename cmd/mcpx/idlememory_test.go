package main

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestIdleMemory holds the resident memory of mcpx's own processes (mcpx
// and its supervisor, not the servers), idle with 8 stdio servers and
// every default feature on, to issue 41's 25 MiB, measured as
// BenchmarkIdleMemory measures it. Most of it was pages of the executable
// that only the start touched (package execpages): before they were
// given back it was 27.5-27.9 MiB, after 9.4-9.7. mcpx gives them back
// when its start settles and the supervisor once mcpx has asked nothing
// for half a second, so the test measures until then, up to a bound only
// a build that keeps them reaches. Linux only: it reads /proc.
func TestIdleMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	const servers, limit = 8, 25.0 // MiB
	exe := buildMcpx(t)
	p := serveUntilCatalogEnv(t, exe, fixtureServers(t, servers), "", servers*fixtureTools, "MCPX_TRUST=", "XDG_STATE_HOME="+t.TempDir())
	defer p.close()
	measure := func() (rss float64, procs int) {
		rss, _, procs = ownMemory(t, p, exe)
		return rss, procs
	}
	rss, procs := measure()
	for deadline := time.Now().Add(30 * time.Second); rss > limit && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		rss, procs = measure()
	}
	if procs != 2 {
		t.Errorf("measured %d processes of mcpx's own, want 2 (mcpx and its supervisor)", procs)
	}
	if rss > limit {
		t.Errorf("mcpx's own processes keep %.1f MiB resident, idle with %d servers; want at most %.0f", rss, servers, limit)
	}
	t.Logf("idle with %d servers: %.1f MiB resident in %d processes", servers, rss, procs)

	// What was given back comes back when it is needed.
	for i := range servers {
		res, err := p.request("tools/call", `{"name":"s`+string(rune('0'+i))+`_echo","arguments":{"message":"after"}}`)
		if err != nil || !strings.Contains(string(res), "after") {
			t.Fatalf("a call after the idle wait: %s, %v", res, err)
		}
	}
	if n, err := p.listTools(); err != nil || n != servers*fixtureTools {
		t.Fatalf("tools/list after the idle wait: %d tools, %v", n, err)
	}
	rss, _ = measure()
	t.Logf("after a call to each server and a list: %.1f MiB", rss)
}
