package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkInit measures package initialisation before main, as
// GODEBUG=inittrace=1 reports it, of the mcpx binary (`mcpx --version`)
// and, in the same run, of a Go program that imports nothing: the
// runtime's own share. The slowest packages are logged (-v).
func BenchmarkInit(b *testing.B) {
	exe := buildMcpx(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "empty.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if out, err := exec.Command("go", "build", "-o", empty, src).CombinedOutput(); err != nil {
		b.Fatalf("build the empty program: %v\n%s", err, out)
	}
	var mcpx, base float64
	perPackage := map[string]float64{}
	for b.Loop() {
		total, pkgs := initTrace(b, exe, "--version")
		mcpx += total
		for p, ms := range pkgs {
			perPackage[p] += ms
		}
		total, _ = initTrace(b, empty)
		base += total
	}
	n := float64(b.N)
	b.ReportMetric(mcpx/n, "ms/init-mcpx")
	b.ReportMetric(base/n, "ms/init-empty")
	b.ReportMetric(mcpx/base, "ratio-mcpx:empty")
	names := make([]string, 0, len(perPackage))
	for p := range perPackage {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return perPackage[names[i]] > perPackage[names[j]] })
	for _, p := range names[:min(5, len(names))] {
		b.Logf("init %s: %.2f ms", p, perPackage[p]/n)
	}
}

// initTrace runs exe with GODEBUG=inittrace=1 and returns the sum of the
// clock times of its package initialisations, in ms, and each package's.
func initTrace(b *testing.B, exe string, args ...string) (float64, map[string]float64) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", exe, err, out)
	}
	var total float64
	pkgs := map[string]float64{}
	// "init <package> @<start> ms, <clock> ms clock, <bytes> bytes, <n> allocs"
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		total += ms
		pkgs[f[1]] += ms
	}
	return total, pkgs
}

// slowInitLibraries are libraries whose package initialisation costs
// milliseconds at every mcpx start, which mcpx must not link.
var slowInitLibraries = []string{
	// Compiles its meta-schemas in init (10 to 22 ms), and comes with
	// mcp-go's server package, which its client and client/transport
	// packages import: mcpx links neither (packages upstream/remote and
	// upstream/auth/oauth).
	"github.com/santhosh-tekuri/jsonschema/v6",
	"github.com/mark3labs/mcp-go/server",
	// OpenTelemetry's OTLP and Prometheus exporters bring gRPC, the
	// protobuf runtime, the OTLP types and the Prometheus client: their
	// initialisation and code cost each mcpx process (the supervisor
	// too) about 6 MiB of RSS, telemetry on or off (BenchmarkIdleMemory).
	// Package telemetry has its own exporters.
	"google.golang.org/grpc",
	"google.golang.org/protobuf/proto",
	"github.com/prometheus/client_golang/prometheus",
}

// TestSlowInitLibrariesNotLinked checks with `go list -deps` that no
// library known for a slow package initialisation is linked into mcpx, and
// that mcpx's own code imports none of them.
func TestSlowInitLibrariesNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, lib := range slowInitLibraries {
		if slices.Contains(deps, lib) {
			t.Errorf("mcpx links %s, whose initialisation slows every start", lib)
		}
	}
	out, err = exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "github.com/mcpx/mcpx/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if strings.Contains(string(out), "santhosh-tekuri/jsonschema") {
		t.Errorf("mcpx's own packages import santhosh-tekuri/jsonschema, which compiles meta-schemas at every start")
	}
}
