//go:build unix

package upstream

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// The supervisor is one process for all of this process's stdio upstreams
// (see [MaybeSupervise]): it lives as long as this process does, however
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
	pid  int

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
	cmd.Env = append(os.Environ(), supervisorEnv+"=1")
	cmd.ExtraFiles = []*os.File{theirs} // fd 3, linkFD
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
	l := &supervisorLink{conn: c.(*net.UnixConn), pid: cmd.Process.Pid,
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
	err := l.send(request{Op: "start", ID: id, Child: &spec},
		int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()))
	if err != nil {
		l.fail(err)
	}
	return <-ps.done
}

// send writes one request, with fds attached to its first byte.
func (l *supervisorLink) send(req request, fds ...int) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	msg := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	msg = append(msg, body...)
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
		line, err := r.ReadBytes('\n')
		if err != nil {
			l.fail(err)
			return
		}
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		l.apply(e)
	}
}

func (l *supervisorLink) apply(e event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e.Op {
	case "started":
		if ps := l.starting[e.ID]; ps != nil {
			delete(l.starting, e.ID)
			pid := e.PID
			ps.p.kill = func(force bool) { _ = l.send(request{Op: "signal", PID: pid, Force: force}) }
			l.running[pid] = ps.p
			ps.done <- nil
		}
	case "failed":
		if ps := l.starting[e.ID]; ps != nil {
			delete(l.starting, e.ID)
			ps.done <- errors.New(e.Err)
		}
	case "exited":
		if p := l.running[e.PID]; p != nil {
			delete(l.running, e.PID)
			p.status = e.Status
			close(p.exited)
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
		p.status = "killed: " + errSupervisorGone.Error()
		close(p.exited)
	}
}

func executableNames(command string) []string { return []string{command} }

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
