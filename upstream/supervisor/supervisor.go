//go:build unix

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mcpx/mcpx/internal/execpages"
)

// shutdownGrace is how long the commands get after SIGTERM, once mcpx is
// gone, before everything left is killed.
const shutdownGrace = 2 * time.Second

// trimQuiet is how long the supervisor waits after mcpx's last request
// before it gives back the pages of its executable it touched serving it.
const trimQuiet = 500 * time.Millisecond

// supervisor is the state of the supervisor process.
type supervisor struct {
	self int

	wmu sync.Mutex // serialises events

	// starting is held for reading by each start until its command is in
	// children, and for writing by the reaper: a command that exited
	// before it was recorded would look like an orphan, and its exit
	// would be lost. Starts run side by
	// side: each waits for its command's exec, which on a busy machine
	// takes a millisecond or more, and eight in a row made mcpx's start
	// that much slower.
	starting sync.RWMutex
	inflight sync.WaitGroup // start requests being served

	mu       sync.Mutex
	children map[int]string // running command → its tag
	seq      int
	running  sync.WaitGroup
}

// Run is the supervisor process: it serves mcpx on [FD] until mcpx is
// gone, then ends every command it started, and returns the exit code.
// Package takeover calls it, before main, in a process started with
// [Env]=1.
func Run() int {
	var st syscall.Stat_t
	if err := syscall.Fstat(FD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		fmt.Fprintln(os.Stderr, "mcpx supervisor: no socket to mcpx on fd 3")
		return 2
	}
	syscall.CloseOnExec(FD)
	_ = syscall.SetNonblock(FD, false)
	// mcpx ends the supervisor by going away; a Ctrl-C at the terminal is
	// for mcpx and its commands to handle.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGPIPE)
	// Orphans in a tree (a grandchild whose parent exited, one that called
	// setsid included) become the supervisor's children, so that they can
	// still be found and stopped. Every child that exits, command or
	// orphan, is reaped at the SIGCHLD that says so: no thread waits for
	// each command (a blocked wait holds an OS thread, 25 KB of memory a
	// command).
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpx supervisor: cannot adopt orphans (%v): a process that leaves its group may outlive mcpx\n", err)
	}
	s := &supervisor{self: os.Getpid(), children: map[int]string{}}
	orphans := make(chan os.Signal, 1)
	signal.Notify(orphans, syscall.SIGCHLD)
	go func() {
		for range orphans {
			s.reap()
		}
	}()
	if err := s.serve(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpx supervisor: %v\n", err)
	}
	s.shutdown()
	return 0
}

// serve handles requests until mcpx is gone (nil) or sends garbage.
func (s *supervisor) serve() error {
	oob := make([]byte, syscall.CmsgSpace(3*4))
	// Once mcpx has asked nothing for trimQuiet, what the supervisor's
	// start and the commands' starts touched of the executable is given
	// back (package execpages): most of its memory, and needed again only
	// for the next start.
	trim := time.AfterFunc(trimQuiet, func() { _, _ = execpages.Drop() })
	defer trim.Stop()
	for {
		var head [4]byte
		n, oobn, err := recvmsg(head[:], oob)
		if err != nil || n == 0 {
			return err // n == 0: EOF, mcpx is gone
		}
		trim.Reset(trimQuiet)
		files := receivedFiles(oob[:oobn])
		m, err := s.readRest(head, n)
		if err != nil {
			closeAll(files)
			return err
		}
		switch m.Op {
		case OpStart:
			s.inflight.Add(1)
			go func() {
				defer s.inflight.Done()
				s.start(m, files)
			}()
		case OpSignal:
			closeAll(files)
			s.signal(m.PID, m.Force)
		default:
			closeAll(files)
		}
	}
}

// readRest reads the rest of a message whose first n header bytes are in
// head. It reads exactly the message: a read past it would take (and
// drop) the descriptors sent with the next one.
func (s *supervisor) readRest(head [4]byte, n int) (Message, error) {
	if err := readFull(head[n:]); err != nil {
		return Message{}, err
	}
	size, err := Size(head[:])
	if err != nil {
		return Message{}, err
	}
	body := make([]byte, size)
	if err := readFull(body); err != nil {
		return Message{}, err
	}
	return Parse(body)
}

func recvmsg(p, oob []byte) (n, oobn int, err error) {
	for {
		n, oobn, _, _, err = syscall.Recvmsg(FD, p, oob, recvFlags)
		if err != syscall.EINTR {
			return n, oobn, err
		}
	}
}

func readFull(p []byte) error {
	for len(p) > 0 {
		n, err := syscall.Read(FD, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return errors.New("mcpx closed the socket in the middle of a message")
		}
		p = p[n:]
	}
	return nil
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

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

func (s *supervisor) start(m Message, stdio []*os.File) {
	defer closeAll(stdio)
	if len(stdio) != 3 {
		s.send(Message{Op: OpFailed, ID: m.ID, Text: "start request without stdin, stdout and stderr"})
		return
	}
	s.mu.Lock()
	s.seq++
	tag := strconv.Itoa(s.self) + "." + strconv.Itoa(s.seq)
	s.mu.Unlock()
	s.starting.RLock()
	proc, err := os.StartProcess(m.Path, append([]string{m.Path}, m.Args...), &os.ProcAttr{
		Dir:   m.Dir,
		Env:   withTag(m.Env, tag),
		Files: stdio,
		Sys:   commandAttr(),
	})
	if err == nil {
		s.mu.Lock()
		s.children[proc.Pid] = tag
		s.running.Add(1)
		s.mu.Unlock()
	}
	s.starting.RUnlock()
	if err != nil {
		s.send(Message{Op: OpFailed, ID: m.ID, Text: err.Error()})
		return
	}
	// The reaper waits for it (reap); the handle is not needed (and
	// Release forgets the pid).
	pid := proc.Pid
	_ = proc.Release()
	s.send(Message{Op: OpStarted, ID: m.ID, PID: pid})
}

// exited ends a command the reaper found gone: what it left behind goes
// too, in its group or out of it, and mcpx is told; s.mu is held.
func (s *supervisor) exitedLocked(pid int, tag string) {
	delete(s.children, pid)
	signalTree(func() []int { return adopted(s.self, tag, s.isCommand, 0) }, syscall.SIGKILL)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// exitText says how a command ended, as os.ProcessState.String does; ""
// for a zero exit status.
func exitText(ws syscall.WaitStatus) string {
	var res string
	switch {
	case ws.Exited():
		if ws.ExitStatus() == 0 {
			return ""
		}
		res = "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		res = "signal: " + ws.Signal().String()
	default:
		res = "wait status " + strconv.Itoa(int(ws))
	}
	if ws.CoreDump() {
		res += " (core dumped)"
	}
	return res
}

// withTag returns env with TreeEnv set to tag, replacing the tag of an
// outer mcpx's supervisor (an mcpx that serves behind another).
func withTag(env []string, tag string) []string {
	prefix := TreeEnv + "="
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if len(kv) < len(prefix) || kv[:len(prefix)] != prefix {
			out = append(out, kv)
		}
	}
	return append(out, prefix+tag)
}

// isCommand reports whether pid is a running command; s.mu is held.
func (s *supervisor) isCommand(pid int) bool {
	_, ok := s.children[pid]
	return ok
}

// signal sends SIGTERM, or with force SIGKILL, to a running command's
// group and the rest of its tree. A command that has already exited is
// not signalled: its pid may name another process by now.
func (s *supervisor) signal(pid int, force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tag, ok := s.children[pid]; ok {
		s.signalCommand(pid, tag, force)
	}
}

// signalCommand signals one command's group, then its descendants that
// left the group and the orphans adopted from it; s.mu is held. Without
// force only the processes outside the group get a signal of their own,
// so that none gets it twice.
func (s *supervisor) signalCommand(pid int, tag string, force bool) {
	sig, outside := syscall.SIGTERM, pid
	if force {
		sig, outside = syscall.SIGKILL, 0
	}
	// The group first: the command gets the signal before the rest.
	_ = syscall.Kill(-pid, sig)
	signalTree(func() []int {
		return append(descendants(pid, outside), adopted(s.self, tag, s.isCommand, outside)...)
	}, sig)
}

// shutdown ends every tree once mcpx is gone: SIGTERM to each, time to
// exit, then SIGKILL to whatever is left below the supervisor.
func (s *supervisor) shutdown() {
	s.inflight.Wait() // a command still starting is ended with the rest
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
	t := time.NewTimer(shutdownGrace)
	select {
	case <-done:
	case <-t.C:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid := range s.children {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	signalTree(func() []int { return descendants(s.self, 0) }, syscall.SIGKILL)
}

// reap reaps every child that has exited: a command is ended (exitedLocked)
// and mcpx told; an adopted orphan only goes.
func (s *supervisor) reap() {
	type exit struct {
		pid  int
		text string
	}
	var exits []exit
	s.starting.Lock()
	s.mu.Lock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			break
		}
		if tag, ok := s.children[pid]; ok {
			s.exitedLocked(pid, tag)
			exits = append(exits, exit{pid, exitText(ws)})
		}
	}
	s.mu.Unlock()
	s.starting.Unlock()
	for _, e := range exits {
		s.send(Message{Op: OpExited, PID: e.pid, Text: e.text})
		s.running.Done()
	}
}

// send writes one event to mcpx; when mcpx is gone there is no one to tell.
func (s *supervisor) send(m Message) {
	b := m.Append(nil)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for len(b) > 0 {
		n, err := syscall.Write(FD, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		b = b[n:]
	}
}
