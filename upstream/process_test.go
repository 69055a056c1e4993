package upstream_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// These tests read /proc to see which processes are left, so they run on
// Linux only.
func skipUnlessLinux(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
}

// TestCloseKillsProcessTree closes a server that leaves a sleeper behind a
// shell (as npx does): Close must take the whole tree down, stubborn or
// not, within StopGrace + TermGrace and a little.
func TestCloseKillsProcessTree(t *testing.T) {
	skipUnlessLinux(t)
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		within time.Duration
	}{
		// Stdin EOF and SIGTERM are ignored: only SIGKILL after the
		// default 1s + 2s graces ends it.
		{"ignores SIGTERM", []string{"--ignore-sigterm"}, 5 * time.Second},
		// Exits at stdin EOF; the sleeper goes with its group.
		{"exits at EOF", nil, 2 * time.Second},
		// The sleeper called setsid: out of the group, found through the
		// supervisor's tree.
		{"setsid grandchild", []string{"--setsid"}, 2 * time.Second},
		{"setsid grandchild ignores SIGTERM", []string{"--setsid", "--ignore-sigterm"}, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			srv := stdioServer("tree", append([]string{"--grandchild", "--pid-dir", dir}, tc.args...)...)
			c := connect(t, srv, &upstream.Options{}) // the default graces
			pids := waitForTree(t, dir)

			start := time.Now()
			c.Close()
			elapsed := time.Since(start)
			t.Logf("Close took %s", elapsed.Round(time.Millisecond))
			if elapsed > tc.within {
				t.Errorf("Close took %s, want less than %s", elapsed, tc.within)
			}
			// A SIGKILL takes effect a moment after kill returns.
			testenv.Eventually(t, time.Second, func() bool { return len(alive(pids)) == 0 },
				"processes left after Close: %v", describe(alive(pids)))
		})
	}
}

// TestServerExitTakesSetsidGrandchild: a server that exits on its own
// (the crash tool) leaves nothing behind, not even a grandchild that
// called setsid and ignores SIGTERM.
func TestServerExitTakesSetsidGrandchild(t *testing.T) {
	skipUnlessLinux(t)
	t.Parallel()
	dir := t.TempDir()
	c := connect(t, stdioServer("daemonizer", "--grandchild", "--setsid", "--ignore-sigterm", "--pid-dir", dir), nil)
	pids := waitForTree(t, dir)
	if sleeper := firstWithRole(pids, "sleeper"); pgid(sleeper) == pgid(firstWithRole(pids, "server")) {
		t.Fatalf("the sleeper did not leave the server's process group")
	}
	if _, err := callTool(t, c, "crash", nil); err == nil {
		t.Fatal("crash answered")
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return len(alive(pids)) == 0 },
		"processes left after the server exited: %v", describe(alive(pids)))
}

// pgid is the process group of pid, 0 when unknown.
func pgid(pid int) int {
	fields := procStat(pid)
	if len(fields) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(fields[2])
	return n
}

// TestParentKilledLeavesNoOrphans SIGKILLs a process standing in for mcpx
// (this test binary in runParent mode, with one connected Client): its
// supervisor must take down the server and its sleeper, whether the server
// ignores everything or exits at once when its stdin closes.
func TestParentKilledLeavesNoOrphans(t *testing.T) {
	skipUnlessLinux(t)
	t.Parallel()
	for _, tc := range []struct{ name, args string }{
		{"ignores SIGTERM", "--ignore-sigterm"},
		{"exits at EOF", ""},
		{"setsid grandchild", "--setsid"},
		{"setsid grandchild ignores SIGTERM", "--setsid --ignore-sigterm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testParentKilled(t, tc.args, false)
		})
	}
	// Idle, the supervisor gives back the pages of the executable its
	// start touched; what it runs when mcpx dies faults them back in.
	t.Run("supervisor idle", func(t *testing.T) {
		t.Parallel()
		testParentKilled(t, "--setsid --ignore-sigterm", true)
	})
}

func testParentKilled(t *testing.T, args string, idle bool) {
	parent, pids := startParent(t, args)
	// The supervisor is the server's parent.
	if sup := ppid(firstWithRole(pids, "server")); sup > 1 && sup != parent.Process.Pid {
		pids[sup] = "supervisor"
	}
	if !hasRole(pids, "supervisor") {
		t.Errorf("could not find the supervisor among %v", pids)
	}
	if a := alive(pids); len(a) != len(pids) {
		t.Fatalf("not all alive before the kill: %v of %v", describe(a), pids)
	}
	if sup := firstWithRole(pids, "supervisor"); idle && sup > 0 {
		started := residentKB(sup)
		testenv.Eventually(t, 10*time.Second, func() bool { return residentKB(sup) < started-1024 },
			"the idle supervisor keeps %d kB resident, %d after its start: it gave back less than 1 MiB", residentKB(sup), started)
	}

	start := time.Now()
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return len(alive(pids)) == 0 },
		"processes left after the parent died: %v", describe(alive(pids)))
	t.Logf("all gone %s after the parent was killed", time.Since(start).Round(time.Millisecond))
}

// residentKB is pid's RSS in kB, 0 once it is gone.
func residentKB(pid int) int {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Rss:" {
			kb, _ := strconv.Atoi(f[1])
			return kb
		}
	}
	return 0
}

// TestSupervisorKilledTakesServers SIGKILLs the supervisor of a process
// standing in for mcpx: the server dies with it (Pdeathsig), and mcpx,
// seeing its socket to the supervisor close, kills the server's group
// with the sleeper in it.
func TestSupervisorKilledTakesServers(t *testing.T) {
	skipUnlessLinux(t)
	t.Parallel()
	parent, pids := startParent(t, "")
	sup := ppid(firstWithRole(pids, "server"))
	if sup <= 1 || sup == parent.Process.Pid {
		t.Fatalf("the server's parent is %d, not a supervisor (mcpx is %d)", sup, parent.Process.Pid)
	}
	if p, err := os.FindProcess(sup); err != nil || p.Kill() != nil {
		t.Fatalf("kill the supervisor %d: %v", sup, err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return len(alive(pids)) == 0 },
		"processes left after the supervisor died: %v", describe(alive(pids)))
}

// startParent starts this test binary as a stand-in for mcpx (runParent)
// with one fixture server, given more fixture flags, that spawns a sleeper;
// it returns once the parent is ready and the server and sleeper run, and
// kills the parent at cleanup.
func startParent(t *testing.T, args string) (*exec.Cmd, map[int]string) {
	dir := t.TempDir()
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), envParent+"=1", envFixture+"="+fixturePath,
		envPidDir+"="+dir, envArgs+"="+args)
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	parent.Stderr = stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		parent.Process.Kill()
		<-exited
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line)
		parent.Wait()
		close(exited)
	}()
	parentStderr := func() string {
		b, _ := os.ReadFile(stderr.Name())
		return string(b)
	}
	select {
	case line := <-ready:
		if line != "ready" {
			t.Fatalf("parent said %q, want ready; its stderr:\n%s", line, parentStderr())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("parent not ready within 20s; its stderr:\n%s", parentStderr())
	}
	return parent, waitForTree(t, dir)
}

// waitForTree waits until the fixture in dir and its sleeper have written
// their pid files and returns pid → role. At cleanup it kills whatever of
// them is still alive, so that a failing test leaves no processes behind.
func waitForTree(t testing.TB, dir string) map[int]string {
	t.Helper()
	var pids map[int]string
	testenv.Eventually(t, 10*time.Second, func() bool {
		pids = readPids(t, dir)
		return hasRole(pids, "server") && hasRole(pids, "sleeper")
	}, "no server and sleeper pid files in %s: %v", dir, pids)
	t.Cleanup(func() {
		for pid := range alive(pids) {
			if p, err := os.FindProcess(pid); err == nil && isFixture(pid) {
				p.Kill()
			}
		}
	})
	return pids
}

func readPids(t testing.TB, dir string) map[int]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		role, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || len(role) == 0 {
			continue // being written
		}
		pids[pid] = string(role)
	}
	return pids
}

func hasRole(pids map[int]string, role string) bool {
	for _, r := range pids {
		if r == role {
			return true
		}
	}
	return false
}

func firstWithRole(pids map[int]string, role string) int {
	for pid, r := range pids {
		if r == role {
			return pid
		}
	}
	return 0
}

// alive returns the pids that still run: a zombie counts as gone, since
// an orphan killed in a container may wait long for its reaper.
func alive(pids map[int]string) map[int]string {
	out := map[int]string{}
	for pid, role := range pids {
		if state := procState(pid); state != "" && state != "Z" {
			out[pid] = role
		}
	}
	return out
}

func describe(pids map[int]string) string {
	var parts []string
	for pid, role := range pids {
		parts = append(parts, role+" "+strconv.Itoa(pid)+" state "+procState(pid))
	}
	return strings.Join(parts, ", ")
}

// procState is the state letter of /proc/<pid>/stat, "" when there is no
// such process.
func procState(pid int) string {
	fields := procStat(pid)
	if len(fields) < 1 {
		return ""
	}
	return fields[0]
}

// ppid is the parent of pid, 0 when unknown.
func ppid(pid int) int {
	fields := procStat(pid)
	if len(fields) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(fields[1])
	return n
}

// procStat returns the fields of /proc/<pid>/stat after the command name,
// which may itself hold spaces and parentheses.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// isFixture guards the cleanup's kill against a pid reused by another
// program.
func isFixture(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	cmd := string(b)
	return strings.Contains(cmd, fixturePath) || strings.Contains(cmd, filepath.Base(os.Args[0]))
}
