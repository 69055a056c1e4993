package supervisor

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

// startSleepers starts n processes that sleep until the test ends, the
// last of them with a child of its own, and returns their pids.
func startSleepers(t testing.TB, n int) []int {
	t.Helper()
	var pids []int
	for i := range n {
		cmd := exec.Command("sleep", "60")
		if i == n-1 {
			cmd = exec.Command("sh", "-c", "sleep 60 & wait")
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		pids = append(pids, cmd.Process.Pid)
	}
	return pids
}

func pidsOf(entries []procEntry) []int {
	var out []int
	for _, e := range entries {
		out = append(out, e.pid)
	}
	slices.Sort(out)
	return out
}

// TestChildrenSourcesAgree: the kernel's children lists and a full read of
// /proc give the same children and the same tree.
func TestChildrenSourcesAgree(t *testing.T) {
	self := os.Getpid()
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(self) + "/children"); err != nil {
		t.Fatalf("this kernel has no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN), which the supervisor's fast walks use: %v", err)
	}
	pids := startSleepers(t, 3)
	live, full := pidsOf(liveChildren(self)), pidsOf(snapshot()(self))
	for _, pid := range pids {
		if !slices.Contains(live, pid) {
			t.Errorf("children lists miss %d: %v", pid, live)
		}
	}
	if !slices.Equal(live, full) {
		t.Errorf("children lists %v, /proc read %v", live, full)
	}
	sh := pids[len(pids)-1]
	var grandchild []int
	for range 100 { // the shell forks its sleeper after it starts
		if grandchild = below(liveChildren, []procEntry{{pid: sh}}, false, 0); len(grandchild) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(grandchild) != 1 {
		t.Fatalf("descendants of the shell: %v, want its sleeper", grandchild)
	}
	if got := below(snapshot(), []procEntry{{pid: sh}}, false, 0); !slices.Equal(got, grandchild) {
		t.Errorf("below from a /proc read = %v, from children lists %v", got, grandchild)
	}
}

// BenchmarkChildren: finding this process's children from the kernel's
// lists against reading every process's stat, in the same run. The ratio
// grows with how many processes the machine runs.
func BenchmarkChildren(b *testing.B) {
	startSleepers(b, 3)
	self := os.Getpid()
	var live, full int
	b.Run("children-lists", func(b *testing.B) {
		for b.Loop() {
			live = len(liveChildren(self))
		}
	})
	b.Run("proc-read", func(b *testing.B) {
		for b.Loop() {
			full = len(snapshot()(self))
		}
	})
	if live != full {
		b.Fatalf("children lists found %d children, a /proc read %d", live, full)
	}
}
