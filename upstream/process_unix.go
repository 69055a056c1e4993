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

// attachLifeline gives the supervisor the read end of a pipe as fd 3 and
// returns the write end, which only mcpx holds. When mcpx dies, however it
// dies, the kernel closes that end and the supervisor reads EOF at once.
func attachLifeline(cmd *exec.Cmd) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{r}
	return w, nil
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

// killTree signals the supervisor's descendants that left its process
// group (setsid), which killGroup does not reach; as a child subreaper the
// supervisor keeps them as descendants (Linux; see signalTree). With force
// it SIGKILLs every descendant. Call it only while the supervisor runs:
// after it is reaped its pid may name another process.
func killTree(cmd *exec.Cmd, force bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if force {
		sig = syscall.SIGKILL
	}
	signalTree(cmd.Process.Pid, sig)
}

func executableNames(command string) []string { return []string{command} }

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
