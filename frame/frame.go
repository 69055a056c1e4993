// Package frame reads newline-delimited JSON-RPC messages (stdio, and the
// data lines of an SSE stream) under a size limit, without ever holding
// more than the limit of one line in memory.
//
// A line longer than the limit is read through and discarded; what the
// caller learns of it is a [*TooLongError] with its size and, found by a
// streaming skim of the discarded bytes, its top-level "id" and whether it
// had a "method", so that the request it answers (or that it was) can get
// an error instead of waiting forever.
//
//	r := frame.NewReader(stdin, 64<<20)
//	for {
//		line, err := r.Next()
//		var tl *frame.TooLongError
//		if errors.As(err, &tl) { /* answer tl.ID with an error */ continue }
//		...
//	}
package frame

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// TooLongError describes a line over the limit. Its text names the size
// and the limit.
type TooLongError struct {
	Size  int64 // the line's length in bytes, without its newline
	Limit int64
	// ID is the message's top-level id as raw JSON; nil when it had none
	// (a notification) or it could not be found.
	ID json.RawMessage
	// Method reports that the message had a top-level "method": it was a
	// request or notification, not a response.
	Method bool
	// Prefix is what came before the JSON object on the line (e.g. an SSE
	// "data: "), at most 64 bytes.
	Prefix []byte
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("message of %s is over the limit of %s (maxMessageBytes)", Bytes(e.Size), Bytes(e.Limit))
}

// Bytes writes n for a message: "64 MiB", "1.5 KiB", "300 bytes".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return trimZero(float64(n)/(1<<30)) + " GiB"
	case n >= 1<<20:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func trimZero(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
}

// Reader reads lines of at most a limit. It is not safe for concurrent use.
//
// A short line (up to [ShortLine] bytes with its newline) is returned
// from the Reader's read buffer, valid until the next call. A longer one
// is gathered where it costs only its own size (see gather) and returned
// in memory of its own, exactly its length, which the Reader never
// touches again: [Reader.Owned] tells the caller it may keep the line, or
// parts of it, without a copy. So a line of N bytes costs about N however
// it arrives, rather than the several N that growing one buffer by
// appending costs (each growth a copy, and the garbage of the smaller
// buffers), and no buffer the size of the largest line stays behind.
//
// The read buffer is held only while lines arrive: a Reader that has read
// everything sent so far waits for the next byte with no buffer, and
// takes one from a pool shared by all Readers when it comes. An idle
// stdio server or client costs no buffer (1,000 idle servers held 64 MB
// of them).
type Reader struct {
	src   io.Reader
	br    *bufio.Reader // nil while waiting for a line's first byte
	first firstByte     // what br reads: the byte that woke the Reader, then src
	max   int64
	long  gather // a long line's bytes while it is read
	owned bool   // the last line is the caller's to keep
}

// ShortLine is the longest line, its newline included, that Next
// returns from the read buffer.
const ShortLine = 64 << 10

// buffers are the read buffers of Readers between lines, ShortLine each.
var buffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, ShortLine) }}

// NewReader returns a Reader of lines of at most max bytes (max <= 0
// means no limit).
func NewReader(r io.Reader, max int64) *Reader {
	return &Reader{src: r, first: firstByte{r: r}, max: max}
}

// Next returns the next line without its newline, valid until the next
// call unless [Reader.Owned] says it is the caller's. A last line without
// a newline is returned with a nil error; the call after it returns
// io.EOF. A line over the limit is consumed whole, holding at most the
// limit of it, and reported as a *TooLongError; Next can be called again
// after it.
func (r *Reader) Next() ([]byte, error) {
	r.owned = false
	if r.br == nil || r.br.Buffered() == 0 {
		// Waiting here, not in next, keeps the frames on the stack of an
		// idle reader small: a reader goroutine's stack, grown while
		// lines came, then shrinks to 4 KB at the next collection (with
		// next's frame under the wait it stayed at 8 KB).
		if err := r.buffer(); err != nil {
			return nil, err
		}
	}
	return r.next()
}

// next reads the line whose first bytes are in the read buffer.
func (r *Reader) next() ([]byte, error) {
	defer r.long.release() // gone already, but for a read error mid-line
	var sk *skim
	var size int64
	long := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		size += int64(len(chunk))
		if sk == nil && r.max > 0 && size > r.max+1 {
			// Over the limit (one byte of slack for the newline): keep
			// only what the skim needs from here on.
			sk = &skim{}
			if long {
				r.long.feed(sk)
			}
		}
		full := errors.Is(err, bufio.ErrBufferFull)
		switch {
		case sk != nil:
			sk.feed(chunk)
		case !long && !full:
			// The whole line in one piece of the read buffer.
		default:
			if !long {
				long = true
				r.long.start(r.max)
			}
			r.long.write(chunk)
		}
		switch {
		case full:
			continue
		case err != nil && (!errors.Is(err, io.EOF) || size == 0):
			return nil, err
		}
		// A whole line, or the last one without its newline.
		if sk != nil {
			n := size
			if bytes.HasSuffix(chunk, []byte("\n")) {
				n--
			}
			return nil, sk.result(n, r.max)
		}
		line := chunk
		if long {
			line, r.owned = r.long.take(), true
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if r.max > 0 && int64(len(line)) > r.max {
			sk = &skim{}
			sk.feed(line)
			return nil, sk.result(int64(len(line)), r.max)
		}
		return line, nil
	}
}

// buffer readies the read buffer for the next line when nothing is read
// ahead: it gives the buffer back, waits for the next byte without one,
// then takes one. The line Next returned last is no longer needed.
func (r *Reader) buffer() error {
	if r.br != nil {
		r.putBuffer()
	}
	if err := r.first.wait(); err != nil {
		return err
	}
	r.getBuffer()
	return nil
}

func (r *Reader) putBuffer() {
	r.br.Reset(nil)
	buffers.Put(r.br)
	r.br = nil
}

func (r *Reader) getBuffer() {
	r.br = buffers.Get().(*bufio.Reader)
	r.br.Reset(&r.first)
}

// Owned reports whether the line Next returned last is the caller's to
// keep: a longer line than [ShortLine] is in memory of its own, which the Reader
// never reuses. A short line is valid only until the next call.
func (r *Reader) Owned() bool { return r.owned }

// HasLine reports whether a whole line is already read, so that Next
// returns it without waiting. It looks only as far as the first newline.
func (r *Reader) HasLine() bool {
	if r.br == nil {
		return false
	}
	b, _ := r.br.Peek(r.br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// firstByte reads the byte that wait read, then r. An error that came
// with the byte is returned by the read after it.
type firstByte struct {
	r   io.Reader
	b   [1]byte
	has bool
	err error
}

// wait reads one byte of r, blocking until there is one or r fails.
func (f *firstByte) wait() error {
	if f.has {
		return nil
	}
	if f.err != nil {
		err := f.err
		f.err = nil
		return err
	}
	for {
		n, err := f.r.Read(f.b[:])
		if n > 0 {
			f.has, f.err = true, err
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (f *firstByte) Read(p []byte) (int, error) {
	switch {
	case len(p) == 0:
		return 0, nil
	case f.has:
		p[0], f.has = f.b[0], false
		return 1, nil
	case f.err != nil:
		err := f.err
		f.err = nil
		return 0, err
	}
	return f.r.Read(p)
}

// skim follows a JSON object's structure byte by byte to find its
// top-level "id" and "method" without keeping the object.
type skim struct {
	started   bool
	prefix    []byte
	depth     int
	inStr     bool
	esc       bool
	expectKey bool
	inKey     bool
	key       []byte
	curKey    string
	inID      bool
	id        []byte
	idBad     bool
	idDone    bool
	method    bool
}

const (
	maxPrefix = 64
	maxKey    = 16
	maxID     = 256
)

// feed follows b, the next bytes of the line.
func (s *skim) feed(b []byte) {
	for i := 0; i < len(b); i++ {
		if s.inStr && !s.inID && !s.inKey {
			// The bulk of a huge message is inside some string: pass
			// over it to where it ends.
			if i = s.skipString(b, i); i == len(b) {
				return
			}
		}
		s.byte(b[i])
	}
}

// skipString passes over the inside of a string from b[i] and returns the
// index of the quote that ends it, or len(b) when the string goes on in
// the next bytes. It costs linear time whatever the string holds: it
// jumps from quote to quote, and whether a quote is escaped depends only
// on the run of backslashes just before it. (Searching afresh at each
// escape for a quote megabytes away made an escape-dense line cost
// quadratic time.)
func (s *skim) skipString(b []byte, i int) int {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			s.esc = escapedAfter(b[i:], s.esc)
			return len(b)
		}
		q += i
		escaped := escapedAfter(b[i:q], s.esc)
		s.esc, i = false, q+1
		if !escaped {
			return q
		}
	}
}

// escapedAfter reports whether the byte after b is escaped, given whether
// b[0] is. After any byte other than a backslash nothing is escaped, so
// only the run of backslashes that ends b counts: an odd run escapes the
// next byte, unless the run is all of b and began escaped itself.
func escapedAfter(b []byte, escaped bool) bool {
	run := len(b) - len(bytes.TrimRight(b, `\`))
	if run < len(b) {
		escaped = false
	}
	return escaped != (run%2 == 1)
}

func (s *skim) byte(c byte) {
	if !s.started {
		if c == '{' {
			s.started, s.depth, s.expectKey = true, 1, true
		} else if len(s.prefix) < maxPrefix {
			s.prefix = append(s.prefix, c)
		}
		return
	}
	if s.depth == 0 {
		return // after the object
	}
	if s.inID {
		s.captureID(c)
	}
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
			if s.inKey {
				s.inKey = false
				s.curKey = string(s.key)
				if s.curKey == "method" {
					s.method = true
				}
			}
			return
		}
		if s.inKey && len(s.key) < maxKey {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case '"':
		s.inStr = true
		if s.depth == 1 && s.expectKey {
			s.inKey, s.key = true, s.key[:0]
		}
	case ':':
		if s.depth == 1 && s.expectKey {
			s.expectKey = false
			if s.curKey == "id" && !s.idDone {
				s.inID, s.id = true, s.id[:0]
			}
		}
	case ',':
		if s.depth == 1 {
			s.endID()
			s.expectKey = true
		}
	case '{', '[':
		s.depth++
	case '}', ']':
		s.depth--
		if s.depth == 0 {
			s.endID()
		}
	}
}

// captureID records a byte of the id's value; the ',' or '}' that ends
// it is taken off again by endID.
func (s *skim) captureID(c byte) {
	if len(s.id) >= maxID {
		s.idBad = true
		return
	}
	s.id = append(s.id, c)
}

func (s *skim) endID() {
	if !s.inID {
		return
	}
	s.inID, s.idDone = false, true
	if len(s.id) > 0 {
		s.id = s.id[:len(s.id)-1] // the ',' or '}'
	}
	s.id = bytes.TrimSpace(s.id)
}

func (s *skim) result(size, limit int64) *TooLongError {
	e := &TooLongError{Size: size, Limit: limit, Method: s.method, Prefix: s.prefix}
	if s.idDone && !s.idBad && len(s.id) > 0 && json.Valid(s.id) && string(s.id) != "null" {
		e.ID = append(json.RawMessage(nil), s.id...)
	}
	return e
}

// LimitLines returns a reader of r's lines in which each line over max is
// replaced by what replace returns for it (nil drops the line; a
// replacement must end with a newline). Lines are passed on whole, so
// that whoever reads on never buffers more than the limit of one line.
func LimitLines(r io.Reader, max int64, replace func(*TooLongError) []byte) io.Reader {
	if max <= 0 {
		return r
	}
	return &limitLines{r: NewReader(r, max), replace: replace}
}

type limitLines struct {
	r       *Reader
	replace func(*TooLongError) []byte
	pending []byte
	newline bool // a newline is due after pending
	lineBuf []byte
	err     error
}

func (l *limitLines) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.newline {
			l.pending, l.newline = newline, false
			break
		}
		if l.err != nil {
			return 0, l.err
		}
		line, err := l.r.Next()
		var tl *TooLongError
		switch {
		case errors.As(err, &tl):
			l.pending = l.replace(tl)
		case err != nil:
			l.err = err
		case l.r.Owned():
			// A long line is passed on from where it is, not copied
			// into a buffer that would stay its size.
			l.pending, l.newline = line, true
		default:
			l.lineBuf = append(append(l.lineBuf[:0], line...), '\n')
			l.pending = l.lineBuf
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// newline ends a line limitLines passes on; never written to.
var newline = []byte("\n")
