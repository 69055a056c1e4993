//go:build unix && !linux

package supervisor

import "syscall"

// commandAttr makes a command lead a new process group.
func commandAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// recvFlags is empty here: received descriptors are marked close-on-exec
// just after they arrive (receivedFiles), and a command started in that
// moment may inherit them.
const recvFlags = 0
