package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestSupervisorThreadsDoNotGrowWithServers: the supervisor reaps its
// commands at SIGCHLD instead of a blocked wait per command, which held an
// OS thread each (25 KB of memory a server: 24 MB with 1,000).
func TestSupervisorThreadsDoNotGrowWithServers(t *testing.T) {
	const servers = 24
	all := map[string]any{}
	for i := range servers {
		all[fmt.Sprintf("s%d", i)] = fx("--name", fmt.Sprintf("s%d", i))
	}
	c := startServe(t, writeConfig(t, map[string]any{"expose": "direct", "servers": all}))
	c.initialize()
	waitForTools(t, c, servers*fixtureTools)
	exe, _ := os.Executable()
	procs := ownProcesses(c.cmd.Process.Pid, exe)
	if len(procs) != 2 {
		t.Fatalf("mcpx and its supervisor: %d processes %v", len(procs), procs)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(procs[1]) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if n, ok := strings.CutPrefix(line, "Threads:"); ok {
			if threads, _ := strconv.Atoi(strings.TrimSpace(n)); threads >= servers {
				t.Errorf("the supervisor of %d servers runs %d threads", servers, threads)
			}
			return
		}
	}
	t.Fatal("no Threads line")
}
