//go:build unix

package upstream

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// supervisorEnv marks the process mcpx starts to supervise its stdio
// upstreams. It is removed before any command starts.
const supervisorEnv = "MCPX_SUPERVISOR"

// treeEnv tags every command the supervisor starts, and so (by
// inheritance) what the command spawns: when a process between them exits,
// its orphans are adopted by the supervisor, and the tag tells which
// command's tree they came from.
const treeEnv = "MCPX_TREE"

// linkFD is the supervisor's end of the socket whose other end only mcpx
// holds (see startSupervisor): requests come in on it, events go out, and
// when mcpx dies, however it dies, the kernel closes mcpx's end and the
// supervisor reads EOF at once.
const linkFD = 3

// shutdownGrace is how long the commands get after SIGTERM, once mcpx is
// gone, before everything left is killed.
const shutdownGrace = 2 * time.Second

// maxRequest bounds one request from mcpx (a command line and its
// environment).
const maxRequest = 16 << 20

// request is one message from mcpx to the supervisor: "start" (with the
// command's stdin, stdout and stderr attached) or "signal".
type request struct {
	Op    string     `json:"op"`
	ID    uint64     `json:"id,omitempty"`    // start: echoed in the reply
	Child *childSpec `json:"child,omitempty"` // start
	PID   int        `json:"pid,omitempty"`   // signal
	Force bool       `json:"force,omitempty"` // signal: SIGKILL, not SIGTERM
}

// event is one message from the supervisor to mcpx, a JSON line:
// "started" or "failed" answers a start, "exited" reports a command's end.
type event struct {
	Op     string `json:"op"`
	ID     uint64 `json:"id,omitempty"`
	PID    int    `json:"pid,omitempty"`
	Status string `json:"status,omitempty"` // exited: "" for status 0
	Err    string `json:"err,omitempty"`    // failed
}

// MaybeSupervise runs the supervisor when this process was started as one
// and reports its exit code; otherwise it returns ok == false at once. Call
// it first thing in main (and in TestMain of packages that start upstreams):
//
//	if code, ok := upstream.MaybeSupervise(); ok {
//		os.Exit(code)
//	}
//
// One supervisor serves all the stdio upstreams of an mcpx process. It
// starts each command as the leader of a new process group, reports its
// exit status, signals its group and the descendants that left it when mcpx
// asks, and, as a child subreaper (Linux), adopts the orphans of each tree.
// When mcpx disappears without cleaning up (SIGKILL, a crash) it terminates
// every tree and exits. That is why it exists: a direct child could learn
// of mcpx's death through Pdeathsig, but the grandchildren behind `sh -c`
// or `npx`, and those that called setsid, could not.
func MaybeSupervise() (code int, ok bool) {
	if os.Getenv(supervisorEnv) != "1" {
		return 0, false
	}
	os.Unsetenv(supervisorEnv)
	return superviseAll(), true
}

// supervisor is the state of the supervisor process.
type supervisor struct {
	conn *net.UnixConn
	self int

	wmu sync.Mutex // serialises events

	// mu guards children and is held across each start, so that the
	// orphan reaper never takes a command's exit status from exec.
	mu       sync.Mutex
	children map[int]string // running command → its tag
	seq      int
	running  sync.WaitGroup
}

func superviseAll() int {
	var st syscall.Stat_t
	if err := syscall.Fstat(linkFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		fmt.Fprintln(os.Stderr, "mcpx supervisor: no socket to mcpx on fd 3")
		return 2
	}
	syscall.CloseOnExec(linkFD)
	f := os.NewFile(linkFD, "mcpx")
	c, err := net.FileConn(f)
	f.Close()
	conn, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintf(os.Stderr, "mcpx supervisor: fd 3: %v\n", err)
		return 2
	}
	// mcpx ends the supervisor by going away; a Ctrl-C at the terminal
	// is for mcpx and its commands to handle.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGPIPE)
	// Orphans in a tree (a grandchild whose parent exited, one that called
	// setsid included) become the supervisor's children, so that they can
	// still be found and stopped; exited ones are reaped at each SIGCHLD.
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpx supervisor: cannot adopt orphans (%v): a process that leaves its group may outlive mcpx\n", err)
	}
	// The package initialisation of the whole mcpx binary left garbage
	// that this small loop never needs: give it back to the OS.
	debug.FreeOSMemory()
	s := &supervisor{conn: conn, self: os.Getpid(), children: map[int]string{}}
	orphans := make(chan os.Signal, 1)
	signal.Notify(orphans, syscall.SIGCHLD)
	go func() {
		for range orphans {
			s.reap()
		}
	}()
	err = s.serve()
	if !errors.Is(err, io.EOF) {
		fmt.Fprintf(os.Stderr, "mcpx supervisor: %v\n", err)
	}
	s.shutdown()
	return 0
}

// serve handles requests until mcpx is gone.
func (s *supervisor) serve() error {
	oob := make([]byte, syscall.CmsgSpace(3*4))
	for {
		var head [4]byte
		n, oobn, _, _, err := s.conn.ReadMsgUnix(head[:], oob)
		if err != nil {
			return err
		}
		files := receivedFiles(oob[:oobn])
		if n < len(head) {
			if _, err := io.ReadFull(s.conn, head[n:]); err != nil {
				closeAll(files...)
				return err
			}
		}
		size := binary.BigEndian.Uint32(head[:])
		if size > maxRequest {
			closeAll(files...)
			return fmt.Errorf("request of %d bytes", size)
		}
		body := make([]byte, size)
		// Read exactly the body: a read past it would take (and drop) the
		// descriptors sent with the next request.
		if _, err := io.ReadFull(s.conn, body); err != nil {
			closeAll(files...)
			return err
		}
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			closeAll(files...)
			return fmt.Errorf("request: %w", err)
		}
		switch req.Op {
		case "start":
			s.start(req, files)
		case "signal":
			closeAll(files...)
			s.signal(req.PID, req.Force)
		default:
			closeAll(files...)
		}
	}
}

// receivedFiles returns the descriptors passed with a message.
func receivedFiles(oob []byte) []*os.File {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "stdio"))
		}
	}
	return files
}

func (s *supervisor) start(req request, stdio []*os.File) {
	defer closeAll(stdio...)
	if req.Child == nil || len(stdio) != 3 {
		s.send(event{Op: "failed", ID: req.ID, Err: "malformed start request"})
		return
	}
	spec := req.Child
	s.mu.Lock()
	s.seq++
	tag := strconv.Itoa(s.self) + "." + strconv.Itoa(s.seq)
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = append(spec.Env[:len(spec.Env):len(spec.Env)], treeEnv+"="+tag)
	cmd.Dir = spec.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio[0], stdio[1], stdio[2]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Start()
	if err == nil {
		s.children[cmd.Process.Pid] = tag
		s.running.Add(1)
	}
	s.mu.Unlock()
	if err != nil {
		s.send(event{Op: "failed", ID: req.ID, Err: err.Error()})
		return
	}
	pid := cmd.Process.Pid
	s.send(event{Op: "started", ID: req.ID, PID: pid})
	go func() {
		defer s.running.Done()
		status := ""
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = ee.ProcessState.String()
			} else {
				status = err.Error()
			}
		}
		// The command is gone; what it left behind goes too, in its group
		// or out of it.
		s.mu.Lock()
		delete(s.children, pid)
		signalTree(func() []int { return adopted(s.self, tag, s.isCommand, 0) }, syscall.SIGKILL)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		s.mu.Unlock()
		s.send(event{Op: "exited", PID: pid, Status: status})
	}()
}

// isCommand reports whether pid is a running command; s.mu is held.
func (s *supervisor) isCommand(pid int) bool {
	_, ok := s.children[pid]
	return ok
}

// signal sends SIGTERM, or with force SIGKILL, to a running command's
// group and to the rest of its tree: descendants that left the group and
// orphans adopted from it. A command that has already exited is not
// signalled: its pid may name another process by now.
func (s *supervisor) signal(pid int, force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tag, ok := s.children[pid]
	if !ok {
		return
	}
	s.signalCommand(pid, tag, force)
}

// signalCommand signals one command's tree; s.mu is held. Without force
// only the processes outside its group get a signal of their own, so that
// none gets it twice.
func (s *supervisor) signalCommand(pid int, tag string, force bool) {
	sig, outside := syscall.SIGTERM, pid
	if force {
		sig, outside = syscall.SIGKILL, 0
	}
	// The group first: the command gets the signal before anything else.
	_ = syscall.Kill(-pid, sig)
	signalTree(func() []int {
		return append(descendants(pid, outside), adopted(s.self, tag, s.isCommand, outside)...)
	}, sig)
}

// shutdown ends every tree once mcpx is gone: SIGTERM to each, time to
// exit, then SIGKILL to whatever is left below the supervisor.
func (s *supervisor) shutdown() {
	s.mu.Lock()
	for pid, tag := range s.children {
		s.signalCommand(pid, tag, false)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.running.Wait()
		close(done)
	}()
	waitFor(done, shutdownGrace)
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid := range s.children {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	signalTree(func() []int { return descendants(s.self, 0) }, syscall.SIGKILL)
}

// reap reaps the orphans that were adopted and then exited. Commands are
// left to exec, which waits for them.
func (s *supervisor) reap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	reapOrphans(s.self, s.isCommand)
}

// send writes one event to mcpx; when mcpx is gone there is no one to tell.
func (s *supervisor) send(e event) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = s.conn.Write(append(b, '\n'))
}
