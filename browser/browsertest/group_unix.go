//go:build unix

package browsertest

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd lead a process group of its own, so that stopGroup
// reaches Chromium's helper processes too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// stopGroup sends the group p leads SIGTERM, or with force SIGKILL.
func stopGroup(p *os.Process, force bool) {
	sig := syscall.SIGTERM
	if force {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-p.Pid, sig)
}
