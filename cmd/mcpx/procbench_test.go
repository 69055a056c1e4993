package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// Benchmarks of mcpx's processes and start: memory with idle upstreams,
// spawn to a complete catalog, and package initialisation. They run the
// real mcpx binary (built once per run), not this test binary, whose
// initialisation and size differ.

// fixtureTools is how many tools the fixture server lists.
const fixtureTools = 10

// buildMcpx builds the mcpx binary into a temporary directory.
func buildMcpx(b testing.TB) string {
	b.Helper()
	exe := filepath.Join(b.TempDir(), "mcpx")
	// As scripts/release builds what users get: static, without cgo, which
	// also spares every start the dynamic loader.
	cmd := exec.Command("go", "build", "-trimpath", "-o", exe, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build mcpx: %v\n%s", err, out)
	}
	return exe
}

// fixtureServers is the config of n fixture servers, every tool exposed
// directly so that tools/list is the complete catalog.
func fixtureServers(b testing.TB, n int) string {
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%d", i)] = fx()
	}
	return writeConfig(b, map[string]any{"expose": "direct", "servers": servers})
}

// stdioPeer is an MCP session over a process's stdio, safe to start from
// any goroutine (errors are returned, not reported).
type stdioPeer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// startPeer starts cmd and initializes an MCP session over its stdio.
func startPeer(cmd *exec.Cmd) (*stdioPeer, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &stdioPeer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := p.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		p.close()
		return nil, err
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p, nil
}

// request sends a request and returns its result, skipping notifications.
func (p *stdioPeer) request(method, params string) (json.RawMessage, error) {
	p.id++
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", p.id, method, params)
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var m struct {
			ID     int
			Result json.RawMessage
		}
		if json.Unmarshal(line, &m) == nil && m.ID == p.id {
			return m.Result, nil
		}
	}
}

// listTools asks for tools/list and returns how many tools it holds.
func (p *stdioPeer) listTools() (int, error) {
	res, err := p.request("tools/list", `{}`)
	if err != nil {
		return 0, err
	}
	var r struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(res, &r); err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	return len(r.Tools), nil
}

// listCatalog lists what mcpx learns of each server before its catalog is
// complete: tools, resources, resource templates and prompts.
func (p *stdioPeer) listCatalog() error {
	if _, err := p.listTools(); err != nil {
		return err
	}
	for _, method := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
		if _, err := p.request(method, `{}`); err != nil {
			return err
		}
	}
	return nil
}

// close ends the session (stdin EOF) and waits for the process.
func (p *stdioPeer) close() {
	p.in.Close()
	p.cmd.Wait()
}

// serveUntilCatalog spawns `mcpx serve --stdio` over cfg and returns it
// once tools/list holds tools tools. cache is where it remembers catalogs;
// "" for a new, empty one.
func serveUntilCatalog(b *testing.B, exe, cfg, cache string, tools int) *stdioPeer {
	b.Helper()
	return serveUntilCatalogEnv(b, exe, cfg, cache, tools)
}

// serveUntilCatalogEnv is serveUntilCatalog with more environment
// variables (later ones win).
func serveUntilCatalogEnv(b testing.TB, exe, cfg, cache string, tools int, env ...string) *stdioPeer {
	b.Helper()
	if cache == "" {
		cache = b.TempDir()
	}
	cmd := exec.Command(exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+cache), env...)
	p, err := startPeer(cmd)
	if err != nil {
		b.Fatalf("mcpx: %v", err)
	}
	// serve answers the first list when every server is up or after its
	// ready timeout; a late server is announced with list_changed, which
	// request skips, so list again until the catalog is whole.
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := p.listTools()
		if err != nil {
			b.Fatalf("mcpx: %v", err)
		}
		if got >= tools {
			return p
		}
		if time.Now().After(deadline) {
			b.Fatalf("mcpx lists %d tools after a minute, want %d", got, tools)
		}
	}
}

// BenchmarkSpawnToCatalog measures from spawning `mcpx serve --stdio` to a
// complete tools/list over 1 and over 8 fixture servers, against spawning
// the same servers directly (the 8 in parallel) and initializing each and
// listing what mcpx lists (tools, resources, templates, prompts), in the
// same run. ratio-8:direct is what mcpx adds on top of the servers' own
// start (target ≤ 1.1) when it starts for the first time, ratio-1:direct
// the same with one server, where mcpx's own start weighs most;
// ratio-remembered-8:direct is every later start, when mcpx lists the
// catalog it remembers from the last run while the servers start. The Go fixture starts in about 3 ms of CPU, less
// than mcpx's own exec and initialisation, so this is the hardest case;
// BenchmarkSpawnToCatalogNode is the common one.
func BenchmarkSpawnToCatalog(b *testing.B) {
	benchSpawn(b, fixtureTools, func(i int) (string, []string) {
		return fixture, []string{"--name", "s" + strconv.Itoa(i)}
	})
}

// BenchmarkSpawnToCatalogNode is BenchmarkSpawnToCatalog over the
// reference server (server-everything) in Node, as most users' servers
// are: started with node, a few hundred milliseconds each.
func BenchmarkSpawnToCatalogNode(b *testing.B) {
	everything := requireEverything(b)
	node := testenv.NeedNode(b)
	p, err := startPeer(exec.Command(node, everything))
	if err != nil {
		b.Fatalf("server-everything: %v", err)
	}
	tools, err := p.listTools()
	p.close()
	if err != nil {
		b.Fatalf("server-everything: %v", err)
	}
	benchSpawn(b, tools, func(int) (string, []string) { return node, []string{everything} })
}

// benchSpawn is the spawn-to-catalog benchmark over the servers server
// starts, each listing tools tools.
func benchSpawn(b *testing.B, tools int, server func(i int) (string, []string)) {
	exe := buildMcpx(b)
	config := func(n int) string {
		servers := map[string]any{}
		for i := range n {
			command, args := server(i)
			servers[fmt.Sprintf("s%d", i)] = map[string]any{"command": command, "args": args, "timeout": "30s"}
		}
		return writeConfig(b, map[string]any{"expose": "direct", "servers": servers})
	}
	one, eight := config(1), config(8)
	viaMcpx := func(cfg, cache string, n int) time.Duration {
		start := time.Now()
		p := serveUntilCatalog(b, exe, cfg, cache, n*tools)
		d := time.Since(start)
		p.close()
		return d
	}
	// Every start after the first: mcpx lists the catalog it remembers
	// while the servers start, and a call waits for its server.
	remembered := b.TempDir()
	viaMcpx(eight, remembered, 8)
	direct := func(n int) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		peers := make([]*stdioPeer, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				command, args := server(i)
				peers[i], errs[i] = startPeer(exec.Command(command, args...))
				if errs[i] == nil {
					errs[i] = peers[i].listCatalog()
				}
			})
		}
		wg.Wait()
		d := time.Since(start)
		for i, p := range peers {
			if p != nil {
				p.close()
			}
			if errs[i] != nil {
				b.Fatalf("direct server %d: %v", i, errs[i])
			}
		}
		return d
	}
	var t1, t8, tr, td1, td time.Duration
	for b.Loop() {
		t1 += viaMcpx(one, "", 1)
		td1 += direct(1)
		t8 += viaMcpx(eight, "", 8)
		tr += viaMcpx(eight, remembered, 8)
		td += direct(8)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(t1), "ms/catalog-1")
	b.ReportMetric(ms(td1), "ms/direct-1")
	b.ReportMetric(ms(t8), "ms/catalog-8")
	b.ReportMetric(ms(td), "ms/direct-8")
	b.ReportMetric(ms(tr), "ms/remembered-8")
	b.ReportMetric(float64(t1)/float64(td1), "ratio-1:direct")
	b.ReportMetric(float64(t8)/float64(td), "ratio-8:direct")
	b.ReportMetric(float64(tr)/float64(td), "ratio-remembered-8:direct")
}

// BenchmarkIdleMemory reports the resident memory of mcpx's own processes
// (mcpx and its supervisor, not the servers) with 1 and with 8 idle stdio
// servers, after the catalog is complete, with every default feature on:
// pinning (into a state directory of the run's own, as a first start
// does), the audit trail, kept results and search; telemetry off, as
// nothing sets it. RSS summed as `ps` shows it (target at most 25 MiB
// with 8), and PSS, which shares the pages the processes map together
// (the same executable) between them. With MCPX_BENCH_BASE naming another
// mcpx binary (a build before a change), that one is measured in turn in
// the same run, and ratio-rss-8:base compares them. Linux only: it reads
// /proc.
//
//	go test -run '^$' -bench IdleMemory -benchtime 5x ./cmd/mcpx/
func BenchmarkIdleMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Fatal("reads /proc: Linux only")
	}
	exe := buildMcpx(b)
	one, eight := fixtureServers(b, 1), fixtureServers(b, 8)
	measure := func(exe, cfg string, n int) (rss, pss float64, procs int) {
		// Default trust (TestMain turns it off for the other tests) into
		// a state directory of this start's own: the first start's pins
		// are written, as a user's first start writes them.
		p := serveUntilCatalogEnv(b, exe, cfg, "", n*fixtureTools, "MCPX_TRUST=", "XDG_STATE_HOME="+b.TempDir())
		defer p.close()
		// Idle: nothing is asked; let the start's garbage be collected
		// as the runtime would on its own.
		time.Sleep(time.Second)
		return ownMemory(b, p, exe)
	}
	base := os.Getenv("MCPX_BENCH_BASE")
	var r1, p1, r8, p8, rb float64
	var procs8 int
	for b.Loop() {
		r, p, _ := measure(exe, one, 1)
		r1, p1 = r1+r, p1+p
		r, p, procs8 = measure(exe, eight, 8)
		r8, p8 = r8+r, p8+p
		if base != "" {
			r, _, _ = measure(base, eight, 8)
			rb += r
		}
	}
	n := float64(b.N)
	b.ReportMetric(r1/n, "MiB-rss-1")
	b.ReportMetric(p1/n, "MiB-pss-1")
	b.ReportMetric(r8/n, "MiB-rss-8")
	b.ReportMetric(p8/n, "MiB-pss-8")
	b.ReportMetric(r8/r1, "ratio-rss-8:1")
	b.ReportMetric(float64(procs8), "mcpx-procs-8")
	if base != "" {
		b.ReportMetric(rb/n, "MiB-rss-8-base")
		b.ReportMetric(r8/rb, "ratio-rss-8:base")
	}
}

// ownMemory sums the RSS and PSS, in MiB, of p's mcpx processes (p and
// its supervisor, running exe), and counts them.
func ownMemory(b testing.TB, p *stdioPeer, exe string) (rss, pss float64, procs int) {
	for _, pid := range ownProcesses(p.cmd.Process.Pid, exe) {
		r, s := memoryOf(b, pid)
		rss, pss, procs = rss+r, pss+s, procs+1
	}
	return rss, pss, procs
}

// ownProcesses returns root and its children that run exe (the
// supervisor), leaving out the servers.
func ownProcesses(root int, exe string) []int {
	out := []int{root}
	dir, _ := os.ReadDir("/proc")
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(root) {
			continue
		}
		if target, _ := os.Readlink("/proc/" + e.Name() + "/exe"); target == exe {
			out = append(out, pid)
		}
	}
	return out
}

// memoryOf returns pid's RSS and PSS in MiB, from smaps_rollup.
func memoryOf(b testing.TB, pid int) (rss, pss float64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		b.Fatalf("memory of %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "Rss:":
			rss = kb / 1024
		case "Pss:":
			pss = kb / 1024
		}
	}
	return rss, pss
}
