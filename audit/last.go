package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// lastWindow is how much of the end of the trail [Last] reads: the
// recent calls a page shows, not the whole history `mcpx log` can print.
const lastWindow = 4 << 20

// Last returns, oldest first, up to n of the lines that keep selects
// (nil: all) among the calls at the end of the trail at path: the last
// few megabytes of its current file, so that a page asking every few
// seconds costs the same whatever the trail's size. No file is no lines.
func Last(path string, n int, keep func(Line) bool) ([]Line, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	r := bufio.NewReader(f)
	if off := fi.Size() - lastWindow; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		r.ReadBytes('\n') // the line cut by the window's start
	}
	ring := make([]Line, 0, n)
	start := 0
	_, err = readLines(r, nil, func(l Line) error {
		if keep != nil && !keep(l) {
			return nil
		}
		if len(ring) < n {
			ring = append(ring, l)
			return nil
		}
		ring[start] = l
		start = (start + 1) % n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return append(ring[start:], ring[:start]...), nil
}
