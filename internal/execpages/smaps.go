package execpages

// This file reads /proc/PID/smaps without strings, strconv or bufio: the
// mcpx supervisor, which imports this package, keeps its imports few
// (see package upstream/supervisor).

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
		if m.dev == dev && m.inode == inode && inode != 0 && len(m.perms) == 4 &&
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
		line, data = cutLine(data)
		if m, ok := parseHeader(line); ok {
			out, in = append(out, m), true
			continue
		}
		if isHeader(line) {
			in = false
			continue
		}
		if !in {
			continue
		}
		if v, ok := field(line, "Anonymous:"); ok {
			out[len(out)-1].anonymous = v
		} else if v, ok := field(line, "Locked:"); ok {
			out[len(out)-1].locked = v
		}
	}
	return out
}

func cutLine(data []byte) (line, rest []byte) {
	for i, c := range data {
		if c == '\n' {
			return data[:i], data[i+1:]
		}
	}
	return data, nil
}

// isHeader reports whether line starts as a mapping's header does: an
// address range.
func isHeader(line []byte) bool {
	i := 0
	for i < len(line) && hexDigit(line[i]) >= 0 {
		i++
	}
	return i > 0 && i < len(line) && line[i] == '-'
}

// parseHeader parses "start-end perms offset major:minor inode [path]".
func parseHeader(line []byte) (mapping, bool) {
	f := splitFields(line, 6)
	if len(f) < 5 {
		return mapping{}, false
	}
	var m mapping
	start, end, ok := cut(f[0], '-')
	if !ok {
		return mapping{}, false
	}
	_, ok1 := parseHex(f[2])
	major, minor, ok2 := cut(f[3], ':')
	s, ok3 := parseHex(start)
	e, ok4 := parseHex(end)
	ma, ok5 := parseHex(major)
	mi, ok6 := parseHex(minor)
	ino, ok7 := parseDec(f[4])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || len(f[1]) != 4 {
		return mapping{}, false
	}
	m.start, m.end, m.perms = uintptr(s), uintptr(e), string(f[1])
	m.dev, m.inode = device{uint32(ma), uint32(mi)}, ino
	m.anonymous, m.locked = -1, -1
	return m, true
}

// field parses "Name:   123 kB".
func field(line []byte, name string) (int64, bool) {
	if len(line) < len(name) || string(line[:len(name)]) != name {
		return 0, false
	}
	f := splitFields(line[len(name):], 2)
	if len(f) == 0 {
		return 0, false
	}
	v, ok := parseDec(f[0])
	return int64(v), ok
}

// splitFields splits line at runs of spaces into at most n fields.
func splitFields(line []byte, n int) [][]byte {
	var out [][]byte
	for len(line) > 0 && len(out) < n {
		for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			line = line[1:]
		}
		i := 0
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		if i > 0 {
			out = append(out, line[:i])
		}
		line = line[i:]
	}
	return out
}

func cut(b []byte, sep byte) (before, after []byte, ok bool) {
	for i, c := range b {
		if c == sep {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		d := hexDigit(c)
		if d < 0 {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

func parseDec(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
