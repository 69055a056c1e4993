//go:build windows

package upstream

import (
	"os"
	"os/exec"
	"strings"
)

// newCommand runs path directly: Windows has no process groups to lead,
// so there is no supervisor.
func newCommand(_ string, path string, args, env []string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	return cmd
}

// attachLifeline does nothing: there is no supervisor on Windows.
func attachLifeline(*exec.Cmd) (*os.File, error) { return nil, nil }

func killGroup(cmd *exec.Cmd, force bool) {
	if cmd.Process != nil && force {
		_ = cmd.Process.Kill()
	}
}

// killTree does nothing: there is no supervisor tree on Windows.
func killTree(*exec.Cmd, bool) {}

func executableNames(command string) []string {
	if strings.Contains(command, ".") {
		return []string{command}
	}
	names := []string{command}
	for _, ext := range strings.Split(os.Getenv("PATHEXT"), ";") {
		if ext != "" {
			names = append(names, command+strings.ToLower(ext))
		}
	}
	return names
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
