package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal cols columns wide and returns its
// controlling side and the terminal side a child writes to.
func openPTY(t testing.TB, cols uint16) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ctl.Close() })
	fd := int(ctl.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: cols}); err != nil {
		t.Fatalf("set the window size: %v", err)
	}
	return ctl, tty
}

// runOnTerminal runs mcpx with stdout on a terminal cols wide and returns
// what it wrote there, "\r\n" made "\n", and its exit code.
func runOnTerminal(t testing.TB, cols uint16, args ...string) (string, int) {
	t.Helper()
	ctl, tty := openPTY(t, cols)
	cmd := mcpxCommand(args...)
	cmd.Stdout = tty
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.Env = append(cmd.Env, "TERM=xterm", "COLUMNS=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; EOF (EIO) comes when the child exits
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&out, ctl) // ends with EIO once no process has the terminal open
	}()
	err := cmd.Wait()
	<-done
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
		t.Logf("mcpx %s: %v; stderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.ReplaceAll(out.String(), "\r\n", "\n"), code
}

func TestListFitsTheTerminal(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})
	const cols = 60
	out, code := runOnTerminal(t, cols, "list", "tools", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(ansi.Strip(lines[0]), "NAME") {
		t.Fatalf("want a header and rows on a terminal:\n%s", out)
	}
	for _, l := range lines {
		plain := ansi.Strip(l)
		if ansi.StringWidth(plain) > cols || strings.HasSuffix(plain, " ") {
			t.Errorf("line wider than %d or with trailing spaces: %q", cols, plain)
		}
	}
	if !strings.Contains(out, "fx_echo  ") || !strings.Contains(out, "…") {
		t.Errorf("want whole names and descriptions cut with …:\n%s", out)
	}
}
