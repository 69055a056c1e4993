package supervisor

import "syscall"

// commandAttr makes a command lead a new process group and die with the
// supervisor should it ever die first (killed from outside): mcpx then
// sees the socket close and reports the servers gone. Pdeathsig fires when
// the forking thread exits; commands are started from the main goroutine
// during package initialisation, which the runtime keeps on the main
// thread, and that thread lives as long as the process.
func commandAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
