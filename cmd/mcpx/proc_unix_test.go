//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// processAlive reports whether a process with pid exists.
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killPid sends pid SIGKILL.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// ownGroup makes cmd lead a process group of its own, for killGroup.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends the group p leads SIGKILL.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
