package supervisor

import "syscall"

// commandAttr makes a command lead a new process group and die with the
// supervisor should it ever die first (killed from outside): mcpx then
// sees the socket close and reports the servers gone. Pdeathsig fires when
// the forking thread exits, not the process; the Go runtime ends a thread
// only when a goroutine locked to it (runtime.LockOSThread) exits, and
// nothing in the supervisor locks one, so its threads live as long as it.
func commandAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
