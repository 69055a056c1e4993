//go:build unix

package upstream_test

import (
	"os/exec"
	"syscall"
)

// inNewGroup makes cmd lead a process group of its own, so that
// killGroupOf takes down whatever it spawns too.
func inNewGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroupOf(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
