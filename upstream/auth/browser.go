package auth

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// OpenBrowser opens url in the user's browser and returns once the opener
// started (it does not wait for the browser). browserEnv is $BROWSER: a
// command, or several separated by ':' tried in order, where %s stands for
// the URL (appended when absent), as other CLIs read it. Empty means the OS
// opener (open, xdg-open, or the Windows URL handler).
func OpenBrowser(url, browserEnv string) error {
	var cmds []*exec.Cmd
	var errs []error
	if browserEnv != "" {
		for _, c := range strings.Split(browserEnv, ":") {
			if c = strings.TrimSpace(c); c == "" {
				continue
			}
			// A shell always starts: try only commands that exist, so that
			// the next one in the list gets its turn.
			if f := strings.Fields(c); len(f) == 0 || !commandExists(f[0]) {
				errs = append(errs, fmt.Errorf("%q not found", strings.Fields(c + " ")[0]))
				continue
			}
			if strings.Contains(c, "%s") {
				c = strings.ReplaceAll(c, "%s", `"$1"`)
			} else {
				c += ` "$1"`
			}
			// The URL is an argument, never part of the script.
			cmds = append(cmds, exec.Command("sh", "-c", c, "sh", url))
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			cmds = append(cmds, exec.Command("open", url))
		case "windows":
			cmds = append(cmds, exec.Command("rundll32", "url.dll,FileProtocolHandler", url))
		default:
			cmds = append(cmds, exec.Command("xdg-open", url))
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			errs = append(errs, err)
			continue
		}
		// Reap it, so no zombie stays behind.
		go cmd.Wait()
		return nil
	}
	if len(errs) == 0 {
		return errors.New("no browser command")
	}
	return fmt.Errorf("open a browser: %w", errors.Join(errs...))
}

func commandExists(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}
