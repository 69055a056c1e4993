package execpages

import (
	"bytes"
	"strconv"
)

// This file reads /proc/PID/smaps with bytes and strconv only, which the
// mcpx supervisor, importing this package, may import (see package
// upstream/supervisor: each import that sorts late grows its memory).

// device is a device number, as a mapping's header shows it.
type device struct{ major, minor uint32 }

// mapping is one mapping of /proc/PID/smaps.
type mapping struct {
	start, end uintptr
	perms      string // "r-xp"
	dev        device
	inode      uint64
	// anonymous is the kB of private copies (the Anonymous: line),
	// locked the kB locked (Locked:); -1 until read.
	anonymous, locked int64
}

// droppable returns the mappings of smaps that Drop may give back: the
// file (dev, inode), private, not writable, no page of it copied or
// locked, as its own lines say (a mapping without them is kept).
func droppable(smaps []byte, dev device, inode uint64) []mapping {
	var out []mapping
	for _, m := range parseSmaps(smaps) {
		if m.dev == dev && m.inode == inode && inode != 0 &&
			m.perms[1] == '-' && m.perms[3] == 'p' && m.anonymous == 0 && m.locked == 0 && m.end > m.start {
			out = append(out, m)
		}
	}
	return out
}

// parseSmaps reads the mappings of an smaps file. A mapping whose header
// does not parse is left out, and so are the lines that follow it.
func parseSmaps(data []byte) []mapping {
	var out []mapping
	in := false // the lines that follow belong to out's last mapping
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if name := f[0]; name[len(name)-1] == ':' {
			if in && len(f) >= 2 {
				v, err := strconv.ParseInt(string(f[1]), 10, 64)
				switch {
				case err != nil:
				case string(name) == "Anonymous:":
					out[len(out)-1].anonymous = v
				case string(name) == "Locked:":
					out[len(out)-1].locked = v
				}
			}
			continue
		}
		m, ok := parseHeader(f)
		if ok {
			out = append(out, m)
		}
		in = ok
	}
	return out
}

// parseHeader parses the fields of "start-end perms offset major:minor
// inode [path]".
func parseHeader(f [][]byte) (mapping, bool) {
	if len(f) < 5 || len(f[1]) != 4 {
		return mapping{}, false
	}
	start, end, ok1 := bytes.Cut(f[0], []byte("-"))
	major, minor, ok2 := bytes.Cut(f[3], []byte(":"))
	s, err1 := strconv.ParseUint(string(start), 16, 64)
	e, err2 := strconv.ParseUint(string(end), 16, 64)
	_, err3 := strconv.ParseUint(string(f[2]), 16, 64)
	ma, err4 := strconv.ParseUint(string(major), 16, 32)
	mi, err5 := strconv.ParseUint(string(minor), 16, 32)
	ino, err6 := strconv.ParseUint(string(f[4]), 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil {
		return mapping{}, false
	}
	return mapping{start: uintptr(s), end: uintptr(e), perms: string(f[1]),
		dev: device{uint32(ma), uint32(mi)}, inode: ino, anonymous: -1, locked: -1}, true
}
