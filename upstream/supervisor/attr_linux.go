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

// recvFlags has the kernel mark the descriptors mcpx sends close-on-exec
// as they arrive: a command started meanwhile on another goroutine would
// otherwise inherit another command's stdio.
const recvFlags = syscall.MSG_CMSG_CLOEXEC
