//go:build unix

package upstream

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/mcpx/mcpx/upstream/supervisor"
)

// The supervisor is one process for all of this process's stdio upstreams
// (see package supervisor): it lives as long as this process does, however
// that ends, so it is held here, per executable, rather than by a Client or
// an Options value that could be closed or copied while others still use
// it. It is started with the first stdio upstream.
var supervisors = struct {
	sync.Mutex
	byPath map[string]*supervisorLink
}{byPath: map[string]*supervisorLink{}}

// supervisorLink is this process's side of the supervisor.
type supervisorLink struct {
	conn *net.UnixConn

	wmu sync.Mutex // serialises requests

	mu       sync.Mutex
	nextID   uint64
	starting map[uint64]*pendingStart
	running  map[int]*process
	gone     error // why the supervisor is unusable, once it is
}

type pendingStart struct {
	p    *process
	done chan error
}

// errNotTakenOver fails every start in a process that was started as a
// supervisor but runs as a program: its binary lacks the import that
// makes it one.
var errNotTakenOver = errors.New(supervisor.Env + "=1 is set, so this process was started as the mcpx supervisor, " +
	"but its binary does not import github.com/mcpx/mcpx/upstream/supervisor/takeover")

// errSupervisorGone fails what the supervisor can no longer do.
var errSupervisorGone = errors.New("the mcpx supervisor exited")

// spawn starts spec under the supervisor (exe, started if none runs) with
// stdio as its stdin, stdout and stderr, and fills in p's kill and exit.
func spawn(p *process, exe string, spec childSpec, stdio [3]*os.File) error {
	l, err := supervisorFor(exe)
	if err != nil {
		return err
	}
	return l.start(p, spec, stdio)
}

func supervisorFor(exe string) (*supervisorLink, error) {
	supervisors.Lock()
	defer supervisors.Unlock()
	if l := supervisors.byPath[exe]; l != nil && l.usable() {
		return l, nil
	}
	l, err := startSupervisor(exe)
	if err != nil {
		return nil, fmt.Errorf("start the mcpx supervisor %s: %w", exe, err)
	}
	supervisors.byPath[exe] = l
	return l, nil
}

// startSupervisor runs exe as the supervisor, in a process group of its
// own (a Ctrl-C for mcpx is not for it), connected by a socket pair whose
// end here no other child inherits: that socket is its lifeline.
func startSupervisor(exe string) (*supervisorLink, error) {
	// Set here, the variable says that this process was started as a
	// supervisor and was not taken over: starting another would run this
	// binary again, and again, each one a program instead of a supervisor.
	if os.Getenv(supervisor.Env) == "1" {
		return nil, errNotTakenOver
	}
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "mcpx")
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), supervisor.Env+"=1")
	cmd.ExtraFiles = []*os.File{theirs} // fd 3, supervisor.FD
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, err
	}
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	l := &supervisorLink{conn: c.(*net.UnixConn),
		starting: map[uint64]*pendingStart{}, running: map[int]*process{}}
	go l.readEvents()
	go func() {
		_ = cmd.Wait()
		l.conn.Close() // ends readEvents, which fails what is left
	}()
	return l, nil
}

func (l *supervisorLink) usable() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gone == nil
}

// start asks the supervisor to start spec and waits for its answer.
func (l *supervisorLink) start(p *process, spec childSpec, stdio [3]*os.File) error {
	l.mu.Lock()
	if l.gone != nil {
		l.mu.Unlock()
		return l.gone
	}
	l.nextID++
	id := l.nextID
	ps := &pendingStart{p: p, done: make(chan error, 1)}
	l.starting[id] = ps
	l.mu.Unlock()
	m := supervisor.Message{Op: supervisor.OpStart, ID: id, Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir}
	if err := l.send(m, int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())); err != nil {
		l.fail(err)
	}
	return <-ps.done
}

// send writes one request, with fds attached to its first byte.
func (l *supervisorLink) send(m supervisor.Message, fds ...int) error {
	msg := m.Append(nil)
	l.wmu.Lock()
	defer l.wmu.Unlock()
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	n, _, err := l.conn.WriteMsgUnix(msg, oob, nil)
	if err == nil && n < len(msg) {
		_, err = l.conn.Write(msg[n:])
	}
	return err
}

// readEvents applies the supervisor's events until it is gone.
func (l *supervisorLink) readEvents() {
	r := bufio.NewReader(l.conn)
	for {
		m, err := supervisor.Read(r)
		if err != nil {
			l.fail(err)
			return
		}
		l.apply(m)
	}
}

func (l *supervisorLink) apply(m supervisor.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch m.Op {
	case supervisor.OpStarted:
		if ps := l.starting[m.ID]; ps != nil {
			delete(l.starting, m.ID)
			pid := m.PID
			ps.p.kill = func(force bool) {
				_ = l.send(supervisor.Message{Op: supervisor.OpSignal, PID: pid, Force: force})
			}
			l.running[pid] = ps.p
			ps.done <- nil
		}
	case supervisor.OpFailed:
		if ps := l.starting[m.ID]; ps != nil {
			delete(l.starting, m.ID)
			ps.done <- errors.New(m.Text)
		}
	case supervisor.OpExited:
		if p := l.running[m.PID]; p != nil {
			delete(l.running, m.PID)
			p.markExited(m.Text)
		}
	}
}

// fail ends the link: starts in progress fail, and the commands, which no
// one can watch any more, are killed with their groups and reported gone.
func (l *supervisorLink) fail(err error) {
	l.conn.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gone != nil {
		return
	}
	l.gone = fmt.Errorf("%w (%v)", errSupervisorGone, err)
	for id, ps := range l.starting {
		delete(l.starting, id)
		ps.done <- l.gone
	}
	for pid, p := range l.running {
		delete(l.running, pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		p.markExited("killed: " + errSupervisorGone.Error())
	}
}

func executableNames(command string) []string { return []string{command} }

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
