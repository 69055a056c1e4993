//go:build unix

package upstream

import (
	"os"
	"os/exec"
	"syscall"
)

// newCommand starts path under the supervisor, which becomes the leader of
// a new process group.
func newCommand(supervisor, path string, args, env []string) *exec.Cmd {
	cmd := exec.Command(supervisor, append([]string{path}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(env[:len(env):len(env)], supervisorEnv+"=1")
	return cmd
}

// killGroup signals the whole process group the command leads.
func killGroup(cmd *exec.Cmd, force bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if force {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

func executableNames(command string) []string { return []string{command} }

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
