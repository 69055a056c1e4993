//go:build unix && !linux

package supervisor

import "syscall"

// commandAttr makes a command lead a new process group.
func commandAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
