package upstream

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/waitfor"
)

// process is one running stdio upstream. On Unix the shared supervisor
// (see package supervisor) started it as the leader of a new process group,
// which holds the real server and everything it spawns.
type process struct {
	stdin  *os.File // our end of the child's stdin
	stdout *os.File // our end of the child's stdout
	exited chan struct{}
	// status says how the process ended ("exit status 3", "signal:
	// killed"), set before exited is closed; "" for a zero exit status.
	status string
	// kill signals the process group and the descendants that left it:
	// SIGTERM, or with force SIGKILL. It does nothing once exited.
	kill func(force bool)

	stderrDone chan struct{} // closed when the stderr logger has finished

	exitMu sync.Mutex
	onExit []func() // run, each on a goroutine of its own, once exited is closed
	gone   bool     // exited is closed
}

// markExited records how the process ended and closes exited, then
// starts what whenExited registered. It is called once, by whoever
// learns of the exit.
func (p *process) markExited(status string) {
	p.exitMu.Lock()
	p.status = status
	close(p.exited)
	p.gone = true
	fs := p.onExit
	p.onExit = nil
	p.exitMu.Unlock()
	for _, f := range fs {
		go f()
	}
}

// whenExited runs f on a goroutine of its own once the process has
// exited (at once if it has): a running server costs no goroutine that
// only waits for its end.
func (p *process) whenExited(f func()) {
	p.exitMu.Lock()
	if !p.gone {
		p.onExit = append(p.onExit, f)
		p.exitMu.Unlock()
		return
	}
	p.exitMu.Unlock()
	go f()
}

// startProcess starts spec's command with its env and cwd. The child's
// stdio are plain OS pipes (not exec's copying goroutines), so its exit is
// seen as soon as it exits even if a grandchild still holds a pipe open.
// stderr receives the child's stderr; it is closed when the child's last
// writer goes away. On Unix, supervisor is the executable to run as the
// supervisor (see package supervisor) when none runs yet.
func startProcess(spec config.Server, supervisor string, stderr func(io.Reader)) (*process, error) {
	env := mergeEnv(os.Environ(), spec.Env)
	path, err := lookPath(spec.Command, spec.Cwd, env)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	p := &process{stdin: inW, stdout: outR, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	err = spawn(p, supervisor, childSpec{Path: path, Args: spec.Args, Env: env, Dir: spec.Cwd}, [3]*os.File{inR, outW, errW})
	closeAll(inR, outW, errW)
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, fmt.Errorf("start %s: %w", spec.Command, err)
	}
	go func() {
		defer close(p.stderrDone)
		stderr(errR)
		errR.Close()
	}()
	return p, nil
}

// childSpec is what the supervisor needs to start a command.
type childSpec struct {
	Path string
	Args []string
	Env  []string
	Dir  string
}

// stop ends the process in steps: close its stdin and give it grace to
// exit on its own, then SIGTERM its group, then SIGKILL it. It returns once
// the process has been reaped.
func (p *process) stop(grace, term time.Duration) {
	defer waitfor.Closed(p.stderrDone, stderrDrainMax)
	p.stdin.Close()
	if waitfor.Closed(p.exited, grace) {
		return
	}
	p.kill(false)
	if waitfor.Closed(p.exited, term) {
		return
	}
	p.kill(true)
	<-p.exited
}

// stderrDrainMax bounds the wait for the last stderr lines after the group
// is gone; only a process that escaped the group could hold the pipe longer.
const stderrDrainMax = time.Second

// exitError describes how the process ended, for a status line.
func (p *process) exitError() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	if p.status == "" {
		return errors.New("process exited with status 0")
	}
	return errors.New("process " + p.status)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// mergeEnv returns base with extra set on top, later keys winning, in a
// stable order.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// lookPath resolves command the way the child will see it: with the PATH
// from its own env, and relative paths against its cwd. Doing it here turns
// the commonest mistake into a clear error instead of a silent exit.
func lookPath(command, cwd string, env []string) (string, error) {
	if command == "" {
		return "", errors.New("no command")
	}
	if strings.ContainsRune(command, filepath.Separator) || strings.ContainsRune(command, '/') {
		p := command
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("command %q: %w", command, err)
		}
		return command, nil
	}
	pathEnv := ""
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "PATH" {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		for _, name := range executableNames(command) {
			p := filepath.Join(dir, name)
			if isExecutable(p) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("command %q not found in PATH", command)
}
