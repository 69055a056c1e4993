//go:build unix

package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// supervisorEnv marks a process started by mcpx to supervise one upstream
// command. It is removed before the command itself starts.
const supervisorEnv = "MCPX_SUPERVISOR"

// lifelineFD is the supervisor's end of the pipe whose other end only
// mcpx holds (see attachLifeline).
const lifelineFD = 3

// exitRace is how long the supervisor, after its command exits, watches for
// mcpx's death before it exits too: a command that quit because mcpx died
// (stdin EOF) usually exits a moment before the lifeline read reports it.
const exitRace = 50 * time.Millisecond

// MaybeSupervise runs the supervisor when this process was started as one
// and reports its exit code; otherwise it returns ok == false at once. Call
// it first thing in main (and in TestMain of packages that start upstreams):
//
//	if code, ok := upstream.MaybeSupervise(); ok {
//		os.Exit(code)
//	}
//
// The supervisor leads the process group mcpx created for one upstream. It
// runs the command in that group with the same stdin, stdout and stderr,
// outlives the signals mcpx sends to the group so the command gets them
// first, exits with the command's status, and, when mcpx disappears without
// cleaning up (SIGKILL, a crash), terminates the whole group. That last part
// is why it exists: a direct child could learn of its parent's death through
// Pdeathsig, but the grandchildren behind `sh -c` or `npx` could not.
func MaybeSupervise() (code int, ok bool) {
	if os.Getenv(supervisorEnv) != "1" {
		return 0, false
	}
	os.Unsetenv(supervisorEnv)
	return supervise(os.Args[1:]), true
}

func supervise(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "mcpx supervisor: no command")
		return 2
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Orphans in the tree (a grandchild whose parent exited, one that
	// called setsid included) become the supervisor's children, so that
	// it, and mcpx through it, can still find and stop them; exited ones
	// are reaped at each SIGCHLD.
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpx supervisor: cannot adopt orphans (%v): a process that leaves the group may outlive mcpx\n", err)
	}
	orphans := make(chan os.Signal, 1)
	signal.Notify(orphans, syscall.SIGCHLD)

	parentGone := make(chan struct{})
	var st syscall.Stat_t
	if syscall.Fstat(lifelineFD, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
		syscall.CloseOnExec(lifelineFD)
		lifeline := os.NewFile(lifelineFD, "lifeline")
		go func() {
			// Nothing is ever written: this returns when mcpx is gone.
			_, _ = lifeline.Read(make([]byte, 1))
			close(parentGone)
		}()
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpx supervisor: %v\n", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	self := os.Getpid()
	group := -self
	for {
		select {
		case err := <-done:
			// The command is gone; what it left behind goes too, in the
			// group (mcpx kills that as well) or out of it. The tree
			// first: a SIGKILL to the group ends the supervisor too.
			signalTree(self, syscall.SIGKILL)
			select {
			case <-parentGone:
				_ = syscall.Kill(group, syscall.SIGKILL)
			case <-time.After(exitRace):
			}
			return exitCode(err)
		case <-signals:
			// mcpx signals the whole group, and the descendants outside
			// it; the command got this too and decides for itself. mcpx
			// escalates to SIGKILL if it must.
		case <-orphans:
			reapOrphans(cmd.Process.Pid)
		case <-parentGone:
			_ = syscall.Kill(group, syscall.SIGTERM)
			signalTree(self, syscall.SIGTERM)
			select {
			case err := <-done:
				signalTree(self, syscall.SIGKILL)
				_ = syscall.Kill(group, syscall.SIGKILL)
				return exitCode(err)
			case <-time.After(2 * time.Second):
				signalTree(self, syscall.SIGKILL)
				_ = syscall.Kill(group, syscall.SIGKILL)
				return 137
			}
		}
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}
