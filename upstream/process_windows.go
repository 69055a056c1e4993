//go:build windows

package upstream

import (
	"errors"
	"os"
	"os/exec"
	"strings"
)

// spawn runs the command directly: Windows has no process groups to lead,
// so there is no supervisor. A force kill ends the process itself.
func spawn(p *process, _ string, spec childSpec, stdio [3]*os.File) error {
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio[0], stdio[1], stdio[2]
	if err := cmd.Start(); err != nil {
		return err
	}
	p.kill = func(force bool) {
		if force {
			_ = cmd.Process.Kill()
		}
	}
	go func() {
		status := ""
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = ee.ProcessState.String()
			} else {
				status = err.Error()
			}
		}
		p.markExited(status)
	}()
	return nil
}

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
