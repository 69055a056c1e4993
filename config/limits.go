package config

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Bounds of the browser's result limits. Below them no screenshot or
// outline fits at all.
const (
	MinBrowserImageBytes    = 16 << 10
	MinBrowserSnapshotChars = 2000
)

// sizeUnits are the suffixes a size string may end with, longest first
// so that "KiB" is not read as "B".
var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// parseSize reads "1MiB", "512 KiB", "2MB", "1.5m" or "800000" as bytes.
func parseSize(s string) (int64, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n*mult >= math.MaxInt64 {
		return 0, false
	}
	return int64(n * mult), true
}

// size reads a byte size: a number of bytes or a string such as "1MiB".
// It must be at least lowest.
func (r *reader) size(key string, lowest int64) (int64, bool) {
	v, ok := r.get(key)
	if !ok {
		return 0, false
	}
	var n int64
	switch v := v.(type) {
	case string:
		if n, ok = parseSize(v); !ok {
			r.fail(key, "%q is not a size (want a number of bytes or e.g. \"1MiB\", \"500KB\")", v)
			return 0, false
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || f != math.Trunc(f) || f >= math.MaxInt64 {
			r.fail(key, "want a whole number of bytes")
			return 0, false
		}
		n = int64(f)
	default:
		r.fail(key, "want a number of bytes or a size string such as \"1MiB\", not %s", kind(v))
		return 0, false
	}
	if n < lowest {
		r.fail(key, "must be at least %d bytes (%dKiB)", lowest, lowest>>10)
		return 0, false
	}
	return n, true
}

// count reads a whole number that must be at least lowest.
func (r *reader) count(key string, lowest int) (int, bool) {
	v, ok := r.get(key)
	if !ok {
		return 0, false
	}
	num, isNum := v.(json.Number)
	if !isNum {
		r.fail(key, "want a whole number, not %s", kind(v))
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || n > math.MaxInt32 {
		r.fail(key, "want a whole number up to %d", math.MaxInt32)
		return 0, false
	}
	if n < int64(lowest) {
		r.fail(key, "must be at least %d", lowest)
		return 0, false
	}
	return int(n), true
}
