package supervisor

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Env, set to "1", makes a process running a binary that imports package
// takeover the supervisor. It is removed before any command starts.
const Env = "MCPX_SUPERVISOR"

// TreeEnv tags every command the supervisor starts, and so (by
// inheritance) what the command spawns: when a process between them exits,
// its orphans are adopted by the supervisor, and the tag tells which
// command's tree they came from.
const TreeEnv = "MCPX_TREE"

// FD is the supervisor's end of the socket to mcpx.
const FD = 3

// MaxMessage bounds one message (a command line and its environment).
const MaxMessage = 16 << 20

// Request operations, from mcpx to the supervisor.
const (
	OpStart  = 's' // start Path with Args, Env, Dir and 3 attached fds
	OpSignal = 'k' // SIGTERM, or with Force SIGKILL, to PID's tree
)

// Event operations, from the supervisor to mcpx.
const (
	OpStarted = 'S' // the start with ID runs as PID
	OpFailed  = 'F' // the start with ID failed: Text says why
	OpExited  = 'X' // PID exited: Text is how ("exit status 3"), "" for 0
)

// A Message is a request or an event. On the wire it is a 4-byte
// big-endian length and the fields, separated by NUL (which no argument,
// variable or path can hold).
type Message struct {
	Op    byte
	ID    uint64
	PID   int
	Force bool
	Text  string
	Path  string
	Dir   string
	Args  []string
	Env   []string
}

var errMalformed = errors.New("malformed supervisor message")

// Append appends m's wire form to b.
func (m Message) Append(b []byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, m.Op, 0)
	field := func(s string) { b = append(append(b, s...), 0) }
	field(strconv.FormatUint(m.ID, 10))
	field(strconv.Itoa(m.PID))
	field(strconv.FormatBool(m.Force))
	field(m.Text)
	field(m.Path)
	field(m.Dir)
	field(strconv.Itoa(len(m.Args)))
	for _, a := range m.Args {
		field(a)
	}
	for _, e := range m.Env {
		field(e)
	}
	n := len(b) - start - 4
	b[start], b[start+1], b[start+2], b[start+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return b
}

// Size returns the length of the body that follows a 4-byte header.
func Size(head []byte) (int, error) {
	n := int(head[0])<<24 | int(head[1])<<16 | int(head[2])<<8 | int(head[3])
	if n > MaxMessage {
		return 0, errMalformed
	}
	return n, nil
}

// Parse decodes a message's body (without its length).
func Parse(body []byte) (Message, error) {
	f := bytes.Split(body, []byte{0})
	// op, id, pid, force, text, path, dir, nargs, then args and env, and
	// the empty field after the last NUL.
	if len(f) < 9 || len(f[0]) != 1 {
		return Message{}, errMalformed
	}
	m := Message{Op: f[0][0], Text: string(f[4]), Path: string(f[5]), Dir: string(f[6])}
	var err1, err2, err3, err4 error
	m.ID, err1 = strconv.ParseUint(string(f[1]), 10, 64)
	m.PID, err2 = strconv.Atoi(string(f[2]))
	m.Force, err3 = strconv.ParseBool(string(f[3]))
	nargs, err4 := strconv.Atoi(string(f[7]))
	rest := f[8 : len(f)-1]
	if err := errors.Join(err1, err2, err3, err4); err != nil || nargs < 0 || nargs > len(rest) {
		return Message{}, errMalformed
	}
	for _, a := range rest[:nargs] {
		m.Args = append(m.Args, string(a))
	}
	for _, e := range rest[nargs:] {
		m.Env = append(m.Env, string(e))
	}
	return m, nil
}

// Read reads one message from r.
func Read(r io.Reader) (Message, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return Message{}, err
	}
	n, err := Size(head[:])
	if err != nil {
		return Message{}, err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return Message{}, err
	}
	return Parse(body)
}
