package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcpx/mcpx/trust"
)

// TestLargeStart: a start of many servers new to mcpx answers initialize
// at once, pins them in a few writes of pins.json, not one per server
// (each was a rewrite and fsync of the whole file: a first start of 1,330
// servers held initialize 355 s), and every later start lists the whole
// remembered catalog, checked against those pins, while no server is up.
// The servers answer initialize only once a gate file exists, so that
// what mcpx answers before does not depend on how fast 150 processes
// start on a loaded machine. BenchmarkLargeStart measures the same with
// 1,000 servers.
func TestLargeStart(t *testing.T) {
	const servers = 150
	state, cache := t.TempDir(), t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	all := map[string]any{}
	for i := range servers {
		all[fmt.Sprintf("s%d", i)] = map[string]any{"command": fixture, "args": []string{"--name", fmt.Sprintf("s%d", i), "--init-gate", gate}, "timeout": "30s"}
	}
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": all})
	env := append(trustEnv(state, ""), "XDG_CACHE_HOME="+cache)
	dir := filepath.Join(state, "mcpx")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writes := countWrites(t, dir, trust.FileName)

	// First start: no server can answer yet, and nothing is pinned.
	c := startServeEnv(t, cfg, env)
	c.initialize()
	if _, err := os.Stat(filepath.Join(dir, trust.FileName)); !os.IsNotExist(err) {
		t.Fatalf("pins written before any server connected: %v", err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := servers * fixtureTools
	waitForTools(t, c, want)
	c.stdin.Close()
	if !waitExit(c.cmd, 30*time.Second) {
		t.Fatal("mcpx did not exit after stdin closed")
	}
	var pins struct{ Servers map[string]json.RawMessage }
	data, err := os.ReadFile(filepath.Join(dir, trust.FileName))
	if err == nil {
		err = json.Unmarshal(data, &pins)
	}
	if err != nil || len(pins.Servers) != servers {
		t.Fatalf("pins.json holds %d servers (%v), want %d", len(pins.Servers), err, servers)
	}
	// Batched: a write at most every quiet period while servers keep
	// connecting, one at exit. A fifth of the servers is far above
	// what a slow start makes, and far below one write per server.
	if n := writes.Load(); n == 0 || n > servers/5 {
		t.Errorf("pins.json written %d times for %d new servers, want a few", n, servers)
	}

	// Every later start: the remembered catalog, reviewed against the
	// pins, with the gate closed again (no server up).
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	c = startServeEnv(t, cfg, env)
	c.initialize()
	res, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatal(e.Message)
	}
	var list struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(res, &list); err != nil || len(list.Tools) != want {
		t.Fatalf("second start lists %d tools (%v) before any server is up, want the %d remembered", len(list.Tools), err, want)
	}
}

// waitForTools lists tools until there are want of them (servers that
// connect later are announced with list_changed, which request skips).
func waitForTools(t *testing.T, c *rawClient, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, e := c.request("tools/list", map[string]any{})
		if e != nil {
			t.Fatal(e.Message)
		}
		var list struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(res, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Tools) >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tools listed after a minute, want %d", len(list.Tools), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// countWrites counts the files named name renamed or created into dir
// (each write of the pin file renames a new one over it) until the test
// ends.
func countWrites(t *testing.T, dir, name string) *atomic.Int32 {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		t.Fatal(err)
	}
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == name && ev.Has(fsnotify.Create) {
					n.Add(1)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		w.Close()
		<-done
	})
	return &n
}

// TestLargeStartMemory: over 1,000 servers (10,000 tools), with every
// default feature on, mcpx's own processes hold at most 8 KiB of RSS per
// tool at rest, less what they hold with 8 servers in the same run, on
// the first start (nothing pinned or remembered) and on the second
// (both): about 45 KiB before the catalog, the pins and the upstreams'
// goroutines were made lean. The bound is the issue's; measured 7.3 and
// 6.9 KiB. Linux only (it reads /proc). BenchmarkLargeStart reports the
// same with the times.
func TestLargeStartMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	if testing.Short() {
		t.Skip("starts 1,000 servers twice")
	}
	const servers, maxPerTool = 1000, 8.0 // KiB
	exe := buildMcpx(t)
	tools := servers * fixtureTools
	base := measureStart(t, exe, largeConfig(t, 8), "", "", 8*fixtureTools)
	large := largeConfig(t, servers)
	cache, state := t.TempDir(), t.TempDir()
	for _, start := range []string{"first", "second"} {
		s := measureStart(t, exe, large, cache, state, tools)
		root, sup := s.perTool(base, tools)
		t.Logf("%s start: %.2f KiB per tool (root %.2f, supervisor %.2f); initialize after %v, catalog after %v",
			start, root+sup, root, sup, s.init.Round(time.Millisecond), s.catalog.Round(time.Millisecond))
		if root+sup > maxPerTool {
			t.Errorf("%s start over %d tools: %.2f KiB of RSS per tool at rest (root %.2f, supervisor %.2f), want at most %.0f",
				start, tools, root+sup, root, sup, maxPerTool)
		}
	}
}
