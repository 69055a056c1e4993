package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// usage is what a process has spent so far, as Linux counts it: CPU time
// over all its threads, and the read and write system calls it made
// (every kind: pipes, eventfds, the terminal). The call benchmarks take
// it before and after a run of calls, so that mcpx's process and the copy
// relay's can be compared per call where the machine, not the process,
// sets the throughput.
type usage struct {
	cpu      time.Duration
	syscalls int64
}

// usageOf reads pid's usage from /proc; ok is false where there is none
// (another OS), and the benchmarks then leave those metrics out.
func usageOf(pid int) (u usage, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	io, err := os.ReadFile(dir + "/io")
	if err != nil {
		return u, false
	}
	for _, line := range strings.Split(string(io), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if k == "syscr" || k == "syscw" {
			n, _ := strconv.ParseInt(v, 10, 64)
			u.syscalls += n
		}
	}
	// schedstat's first field is the task's time on a CPU in ns; the
	// process's stat counts only whole clock ticks.
	tasks, _ := filepath.Glob(dir + "/task/*/schedstat")
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			u.cpu += time.Duration(ns)
		}
	}
	return u, len(tasks) > 0
}

// usageMeter adds up a process's usage over the runs it is told of.
type usageMeter struct {
	pid   int
	total usage
	ok    bool
}

func newUsageMeter(pid int) *usageMeter {
	_, ok := usageOf(pid)
	return &usageMeter{pid: pid, ok: ok}
}

// run runs f and counts what the process spent meanwhile.
func (m *usageMeter) run(f func()) { meters{m}.run(f) }

// meters count the usage of several processes over the same runs.
type meters []*usageMeter

func (ms meters) run(f func()) {
	before := make([]usage, len(ms))
	for i, m := range ms {
		before[i], _ = usageOf(m.pid)
	}
	f()
	for i, m := range ms {
		after, _ := usageOf(m.pid)
		m.total.cpu += after.cpu - before[i].cpu
		m.total.syscalls += after.syscalls - before[i].syscalls
	}
}

// descendant returns the first process under root (children first) that
// runs exe, or 0 where there is none or no /proc to tell.
func descendant(root int, exe string) int {
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real // as /proc/<pid>/exe shows it
	}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		lists, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		for _, l := range lists {
			b, _ := os.ReadFile(l)
			for _, f := range strings.Fields(string(b)) {
				child, err := strconv.Atoi(f)
				if err != nil {
					continue
				}
				if target, _ := os.Readlink("/proc/" + f + "/exe"); target == exe {
					return child
				}
				queue = append(queue, child)
			}
		}
	}
	return 0
}

// perCall is the usage per call over calls calls: µs of CPU, and system
// calls.
func (m *usageMeter) perCall(calls float64) (cpuMicros, syscalls float64) {
	return float64(m.total.cpu.Nanoseconds()) / 1e3 / calls, float64(m.total.syscalls) / calls
}
