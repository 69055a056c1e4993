package supervisor

import (
	"bytes"
	"os"
	"strconv"
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

// procEntry is what the tree walks need of /proc/<pid>/stat.
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
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgid, _ := strconv.Atoi(string(f[2]))
		out = append(out, procEntry{pid: pid, ppid: ppid, pgid: pgid, zombie: string(f[0]) == "Z"})
	}
	return out
}

// below returns the living (not zombie) processes under roots, with the
// roots themselves when withRoots; with a nonzero outside, only those not
// in that process group (which a signal to the group reaches anyway).
func below(procs []procEntry, roots []int, withRoots bool, outside int) []int {
	children := map[int][]procEntry{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	keep := func(p procEntry) bool { return !p.zombie && (outside == 0 || p.pgid != outside) }
	var out []int
	if withRoots {
		for _, p := range procs {
			for _, r := range roots {
				if p.pid == r && keep(p) {
					out = append(out, p.pid)
				}
			}
		}
	}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if keep(c) {
				out = append(out, c.pid)
			}
			queue = append(queue, c.pid)
		}
	}
	return out
}

// descendants returns the living descendants of root; with a nonzero
// outside, only those not in that process group.
func descendants(root, outside int) []int {
	return below(readProcs(), []int{root}, false, outside)
}

// adopted returns the orphans the supervisor self adopted from the command
// tagged tag (see TreeEnv), with their descendants; with a nonzero outside,
// only those not in that process group. isCommand names the supervisor's
// own commands, which are never orphans.
func adopted(self int, tag string, isCommand func(int) bool, outside int) []int {
	procs := readProcs()
	want := []byte(TreeEnv + "=" + tag + "\x00")
	var roots []int
	for _, p := range procs {
		if p.ppid != self || p.zombie || isCommand(p.pid) {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err == nil && (bytes.Contains(env, append([]byte{0}, want...)) || bytes.HasPrefix(env, want)) {
			roots = append(roots, p.pid)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	return below(procs, roots, true, outside)
}

// signalTree sends sig to the processes list returns: for SIGKILL first
// stopping them all (a stopped process cannot fork) and repeating until
// none is left, so a process forking in a loop cannot outrun it; for
// another signal once.
func signalTree(list func() []int, sig syscall.Signal) {
	if sig != syscall.SIGKILL {
		for _, pid := range list() {
			_ = syscall.Kill(pid, sig)
		}
		return
	}
	for range 20 {
		pids := list()
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

// reapOrphans reaps the zombie children of self that are not commands:
// orphans that were adopted and then exited. Each is waited for by pid,
// never with -1, so a command's own status (which exec collects) is never
// taken.
func reapOrphans(self int, isCommand func(int) bool) {
	for _, p := range readProcs() {
		if p.ppid == self && p.zombie && !isCommand(p.pid) {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}
