package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Filter selects lines of the trail; its zero value selects every line.
type Filter struct {
	// Server keeps the lines of this server only; "" keeps all.
	Server string
	// Since keeps the lines of calls started at or after it; zero keeps
	// all.
	Since time.Time
}

// Match reports whether f selects l.
func (f Filter) Match(l Line) bool {
	return (f.Server == "" || l.Server == f.Server) && (f.Since.IsZero() || !l.Time.Before(f.Since))
}

// Read calls fn with each line of the trail at path, oldest first: the
// rotated files, then path. Missing files are no lines; a line that does
// not parse (cut by a full disk) is skipped.
func Read(path string, fn func(Line) error) error {
	for _, p := range files(path) {
		if err := readFile(p, fn); err != nil {
			return err
		}
	}
	return nil
}

// Follow is Read, then calls fn with each line appended to path later,
// checking every poll, until ctx is done; it follows the trail across a
// rotation. It returns nil when ctx ends it.
func Follow(ctx context.Context, path string, poll time.Duration, fn func(Line) error) error {
	all := files(path)
	for _, p := range all[:len(all)-1] { // the rotated files; path is tailed
		if err := readFile(p, fn); err != nil {
			return err
		}
	}
	t := &tail{path: path}
	defer t.close()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if err := t.read(fn); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// files are the trail's files, oldest first.
func files(path string) []string {
	var out []string
	for i := Files - 1; i > 0; i-- {
		out = append(out, fmt.Sprintf("%s.%d", path, i))
	}
	return append(out, path)
}

func readFile(p string, fn func(Line) error) error {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := readLines(bufio.NewReader(f), nil, fn); err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	return nil
}

// readLines calls fn with each whole line of r, the first continuing
// partial, and returns the bytes of a last line not yet ended by a
// newline, which a writer is still appending.
func readLines(r *bufio.Reader, partial []byte, fn func(Line) error) ([]byte, error) {
	for {
		b, err := r.ReadBytes('\n')
		if len(partial) > 0 {
			b, partial = append(partial, b...), nil
		}
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		var l Line
		if json.Unmarshal(b, &l) != nil {
			continue
		}
		if err := fn(l); err != nil {
			return nil, err
		}
	}
}

// tail reads the current file of the trail as it grows, and the new file
// once the trail has rotated.
type tail struct {
	path    string
	f       *os.File
	r       *bufio.Reader
	partial []byte
}

func (t *tail) read(fn func(Line) error) error {
	if t.f == nil {
		f, err := os.Open(t.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		t.f, t.r, t.partial = f, bufio.NewReader(f), nil
	}
	if err := t.drain(fn); err != nil {
		return err
	}
	// Rotated: what is at path now is a new file, read from its start.
	cur, err1 := os.Stat(t.path)
	open, err2 := t.f.Stat()
	if err1 == nil && err2 == nil && !os.SameFile(cur, open) {
		if err := t.drain(fn); err != nil { // what came before the rename
			return err
		}
		t.close()
		return t.read(fn)
	}
	return nil
}

// drain reads the lines written since the last read, keeping a line
// still being written for the next.
func (t *tail) drain(fn func(Line) error) error {
	rest, err := readLines(t.r, t.partial, fn)
	t.partial = rest
	return err
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}
