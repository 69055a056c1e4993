package upstream

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from linux/prctl.h.
const prSetChildSubreaper = 36

// becomeSubreaper makes orphaned descendants of this process (a grandchild
// whose parent exited, even one that called setsid and so left the process
// group) its children instead of init's, so that they stay findable as
// descendants through /proc.
func becomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}

// procEntry is what descendants needs of /proc/<pid>/stat.
type procEntry struct {
	pid, ppid, pgid int
	zombie          bool
}

// readProcs lists every process, from /proc.
func readProcs() []procEntry {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procEntry, 0, len(dir))
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		out = append(out, procEntry{pid: pid, ppid: ppid, pgid: pgid, zombie: f[0] == "Z"})
	}
	return out
}

// descendants returns the living (not zombie) descendants of root; with
// outside, only those that are not in root's process group (which a
// signal to the group reaches anyway).
func descendants(root int, outside bool) []int {
	children := map[int][]procEntry{}
	for _, p := range readProcs() {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if c.pid == root {
				continue
			}
			if !c.zombie && !(outside && c.pgid == root) {
				out = append(out, c.pid)
			}
			queue = append(queue, c.pid)
		}
	}
	return out
}

// signalTree sends sig to the descendants of root, which leads a process
// group: for SIGKILL to all of them, first stopping them all (a stopped
// process cannot fork) and repeating until none is left, so a process
// forking in a loop cannot outrun it; for another signal only to those
// outside root's group, which a signal to the group does not reach, so
// that no process gets it twice.
func signalTree(root int, sig syscall.Signal) {
	if sig != syscall.SIGKILL {
		for _, pid := range descendants(root, true) {
			_ = syscall.Kill(pid, sig)
		}
		return
	}
	for range 20 {
		pids := descendants(root, false)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGSTOP)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
}

// reapOrphans reaps the zombie children of this process other than keep:
// orphans that were adopted by the subreaper and then exited. Each is
// waited for by pid, never with -1, so the command's own status (which
// exec.Cmd.Wait collects) is never taken.
func reapOrphans(keep int) {
	self := os.Getpid()
	for _, p := range readProcs() {
		if p.ppid == self && p.zombie && p.pid != keep {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}
