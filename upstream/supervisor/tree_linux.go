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

// childrenOf lists the children of a process.
type childrenOf func(pid int) []procEntry

// newChildrenOf reads each process's children from the kernel's own lists
// (/proc/<pid>/task/<tid>/children) as the walk reaches it, which costs
// what the tree holds; reading every process's stat instead costs what the
// machine runs, hundreds of processes on a desktop, at every exit and
// every SIGCHLD. Kernels built without CONFIG_PROC_CHILDREN (rare; every
// major distribution has it) get that full read, once per walk.
func newChildrenOf() childrenOf {
	self := strconv.Itoa(os.Getpid())
	if _, err := os.Stat("/proc/" + self + "/task/" + self + "/children"); err != nil {
		return snapshot()
	}
	return liveChildren
}

// liveChildren returns pid's children, listed per thread: a child is on the
// list of the thread that forked it, and an adopted orphan on one of a
// subreaper's threads.
func liveChildren(pid int) []procEntry {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil // gone meanwhile
	}
	var out []procEntry
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(b) {
			kid, err := strconv.Atoi(string(f))
			if err != nil {
				continue
			}
			if e, ok := readStat(kid); ok {
				out = append(out, e)
			}
		}
	}
	return out
}

// snapshot reads every process once and answers from that.
func snapshot() childrenOf {
	byParent := map[int][]procEntry{}
	for _, p := range readProcs() {
		byParent[p.ppid] = append(byParent[p.ppid], p)
	}
	return func(pid int) []procEntry { return byParent[pid] }
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
		if p, ok := readStat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// readStat reads one process's entry; ok is false once it is gone.
func readStat(pid int) (procEntry, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return procEntry{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	return procEntry{pid: pid, ppid: ppid, pgid: pgid, zombie: string(f[0]) == "Z"}, true
}

// below returns the living (not zombie) processes under roots, with the
// roots themselves when withRoots; with a nonzero outside, only those not
// in that process group (which a signal to the group reaches anyway).
func below(children childrenOf, roots []procEntry, withRoots bool, outside int) []int {
	keep := func(p procEntry) bool { return !p.zombie && (outside == 0 || p.pgid != outside) }
	var out []int
	if withRoots {
		for _, r := range roots {
			if keep(r) {
				out = append(out, r.pid)
			}
		}
	}
	queue := append([]procEntry(nil), roots...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children(p.pid) {
			if keep(c) {
				out = append(out, c.pid)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// descendants returns the living descendants of root; with a nonzero
// outside, only those not in that process group.
func descendants(root, outside int) []int {
	return below(newChildrenOf(), []procEntry{{pid: root}}, false, outside)
}

// adopted returns the orphans the supervisor self adopted from the command
// tagged tag (see TreeEnv), with their descendants; with a nonzero outside,
// only those not in that process group. isCommand names the supervisor's
// own commands, which are never orphans.
func adopted(self int, tag string, isCommand func(int) bool, outside int) []int {
	children := newChildrenOf()
	want := []byte(TreeEnv + "=" + tag + "\x00")
	var roots []procEntry
	for _, p := range children(self) {
		if p.zombie || isCommand(p.pid) {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err == nil && (bytes.Contains(env, append([]byte{0}, want...)) || bytes.HasPrefix(env, want)) {
			roots = append(roots, p)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	return below(children, roots, true, outside)
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
