//go:build unix

package supervisor

import (
	"os/exec"
	"syscall"
	"testing"
)

// TestExitText: the reaper says how a command ended as os.ProcessState
// does, for real exits.
func TestExitText(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   string
	}{
		{"exit 0", ""},
		{"exit 3", "exit status 3"},
		{"kill -9 $$", "signal: killed"},
	} {
		cmd := exec.Command("/bin/sh", "-c", tc.script)
		err := cmd.Run()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if got := exitText(ws); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.script, got, tc.want)
		}
		if err != nil && err.Error() != tc.want {
			t.Errorf("%s: exec says %q, the reaper %q", tc.script, err, exitText(ws))
		}
	}
}
