package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestServersInheritNoClientStream: a server mcpx spawns holds none of
// mcpx's own ends of the client's stdio. One that did could write into
// the client's JSON-RPC stream, and would keep it open after mcpx died.
func TestServersInheritNoClientStream(t *testing.T) {
	pids := t.TempDir()
	c := startServe(t, writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--pid-dir", pids)}}))
	c.initialize()
	c.listToolNames() // the server is up
	waitPidFiles(t, pids, 1)
	server := pidsAlive(t, pids)
	if len(server) != 1 {
		t.Fatalf("fixture pids alive: %v", server)
	}

	client := map[string]string{}
	for _, fd := range []string{"0", "1"} {
		target, err := os.Readlink("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/fd/" + fd)
		if err != nil {
			t.Fatal(err)
		}
		client[target] = "mcpx's fd " + fd
	}
	dir := "/proc/" + strconv.Itoa(server[0]) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if what, ok := client[target]; ok {
			t.Errorf("the server's fd %s is %s (%s)", e.Name(), target, what)
		}
	}
}
