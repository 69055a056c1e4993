package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Defaults of the limits (see [Limits] and [Config]).
const (
	DefaultCallTimeout     = 5 * time.Minute
	DefaultMaxConcurrent   = 32
	DefaultMaxMessageBytes = 64 << 20
	DefaultShutdownTimeout = 5 * time.Second
	DefaultReadyTimeout    = 2 * time.Second
	DefaultMaxResultBytes  = 100 << 10
)

// Limits bound the calls to one upstream server. Each is set per server; a
// top-level key of the same name sets the default for every server.
type Limits struct {
	// CallTimeout is how long a call may go without an answer or a
	// progress notification: each progress notification from the server
	// for that call starts it again. 0 means no limit; default 5m.
	CallTimeout time.Duration
	// MaxCallTime caps a call's total time, progress or not. 0 (the
	// default) means no cap.
	MaxCallTime time.Duration
	// MaxConcurrent is how many calls may be in flight to the server at
	// once; later calls wait in order, their CallTimeout running. Default 32.
	MaxConcurrent int
	// MaxResultBytes caps a tool result as a client of serve receives it:
	// over it, the text is cut and the whole result kept for reading back
	// by URI. 0 ("off") sends every result whole. Default 100 KiB.
	MaxResultBytes int64
}

// DefaultLimits are the limits of a server when the file sets none.
func DefaultLimits() Limits {
	return Limits{CallTimeout: DefaultCallTimeout, MaxConcurrent: DefaultMaxConcurrent,
		MaxResultBytes: DefaultMaxResultBytes}
}

// limits reads callTimeout, maxCallTime, maxConcurrent and maxResultBytes
// over def.
func (r *reader) limits(def Limits) Limits {
	l := def
	if d, ok := r.duration("callTimeout", true); ok {
		l.CallTimeout = d
	}
	if d, ok := r.duration("maxCallTime", true); ok {
		l.MaxCallTime = d
	}
	if n, ok := r.count("maxConcurrent", 1); ok {
		l.MaxConcurrent = n
	}
	if n, ok := r.sizeOrOff("maxResultBytes", MinResultBytes); ok {
		l.MaxResultBytes = n
	}
	return l
}

// MinResultBytes, the least maxResultBytes, keeps it from cutting every
// result to nothing but the note that says where the rest is.
const MinResultBytes = 1 << 10

// sizeOrOff reads a size as size does, or "off" (in any case) for 0.
func (r *reader) sizeOrOff(key string, lowest int64) (int64, bool) {
	if v, ok := r.get(key); ok {
		if s, ok := v.(string); ok && strings.EqualFold(strings.TrimSpace(s), "off") {
			return 0, true
		}
	}
	return r.size(key, lowest)
}

// topLimits reads the top-level limits: the servers' defaults,
// maxMessageBytes, shutdownTimeout and readyTimeout. It runs before the
// servers are read.
func (p *parser) topLimits(tree map[string]any) {
	r := &reader{p: p, m: tree}
	p.cfg.Limits = r.limits(DefaultLimits())
	p.cfg.MaxMessageBytes = DefaultMaxMessageBytes
	if n, ok := r.size("maxMessageBytes", minMessageBytes); ok {
		p.cfg.MaxMessageBytes = n
	}
	p.cfg.ShutdownTimeout = DefaultShutdownTimeout
	if d, ok := r.duration("shutdownTimeout", false); ok {
		p.cfg.ShutdownTimeout = d
	}
	p.cfg.ReadyTimeout = DefaultReadyTimeout
	if d, ok := r.duration("readyTimeout", false); ok {
		p.cfg.ReadyTimeout = d
	}
	if r.err != nil {
		p.errs = append(p.errs, r.err)
	}
}

// duration reads a duration string ("30s", "5m") or a number of seconds.
// zeroOK lets 0 (or "0") through, meaning no limit.
func (r *reader) duration(key string, zeroOK bool) (time.Duration, bool) {
	v, ok := r.get(key)
	if !ok {
		return 0, false
	}
	var d time.Duration
	switch v := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			r.fail(key, "%q is not a duration (want e.g. \"30s\", \"5m\" or a number of seconds)", v)
			return 0, false
		}
	case json.Number:
		secs, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.Abs(secs)*float64(time.Second) >= math.MaxInt64 {
			r.fail(key, "%s seconds is out of range", v)
			return 0, false
		}
		d = time.Duration(secs * float64(time.Second))
	default:
		r.fail(key, "want a duration string or a number of seconds, not %s", kind(v))
		return 0, false
	}
	if d < 0 || d == 0 && !zeroOK {
		r.fail(key, "must be positive")
		return 0, false
	}
	return d, true
}

// count reads a whole number of at least lowest.
func (r *reader) count(key string, lowest int) (int, bool) {
	v, ok := r.get(key)
	if !ok {
		return 0, false
	}
	num, ok := v.(json.Number)
	if !ok {
		r.fail(key, "want a whole number, not %s", kind(v))
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 32)
	switch {
	case errors.Is(err, strconv.ErrRange):
		r.fail(key, "want a whole number up to %d, not %s", math.MaxInt32, num)
		return 0, false
	case err != nil || n < int64(lowest):
		r.fail(key, "want a whole number of at least %d, not %s", lowest, num)
		return 0, false
	}
	return int(n), true
}

// sizeUnits are the suffixes size accepts, in any case, longest first so
// that "MiB" is not read as "B".
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
}

// minMessageBytes keeps maxMessageBytes from making every message an
// error: initialize alone takes a few hundred bytes.
const minMessageBytes = 4 << 10

// Bounds of the browser's result limits: below them no screenshot or
// outline fits at all.
const (
	MinBrowserImageBytes    = 16 << 10
	MinBrowserSnapshotChars = 2000
)

// size reads a byte count of at least lowest: an integer, or a string
// such as "64MiB", "512KB" or "1048576".
func (r *reader) size(key string, lowest int64) (int64, bool) {
	v, ok := r.get(key)
	if !ok {
		return 0, false
	}
	var n int64
	switch v := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			r.fail(key, "want a whole number of bytes or a size such as \"64MiB\", not %s", v)
			return 0, false
		}
		n = i
	case string:
		i, err := parseSize(v)
		if err != nil {
			r.fail(key, "%q: %v", v, err)
			return 0, false
		}
		n = i
	default:
		r.fail(key, "want a number of bytes or a size such as \"64MiB\", not %s", kind(v))
		return 0, false
	}
	if n < lowest {
		r.fail(key, "%d bytes is too small (want at least %d)", n, lowest)
		return 0, false
	}
	return n, true
}

// parseSize reads "64MiB", "64 MiB", "1.5GB", "4096".
func parseSize(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("not a size (want bytes, or a number with KiB, MiB, GiB, KB, MB or GB)")
	}
	return int64(f * float64(mult)), nil
}
