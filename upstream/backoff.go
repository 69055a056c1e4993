package upstream

import (
	"log/slog"
	"strings"
	"time"
)

// backoff is the schedule of a server's restarts after failures: the
// first wait is min, each failure in a row doubles it, up to max, so that
// a server that stays broken is tried less and less often rather than
// every max forever; reset starts again from min once a connection
// lasted. The zero value is not usable: see newBackoff.
type backoff struct {
	min, max time.Duration
	next     time.Duration
}

func newBackoff(min, max time.Duration) *backoff {
	return &backoff{min: min, max: max, next: min}
}

// wait returns how long to wait before the next attempt, and doubles the
// wait after it.
func (b *backoff) wait() time.Duration {
	d := b.next
	b.next = min(b.next*2, b.max)
	return d
}

// reset makes the next wait min again.
func (b *backoff) reset() { b.next = b.min }

// failLevel is the level of the log record of a failed connect attempt.
// A one-shot command, which never retries, logs at info: the command
// itself says which servers failed and why. serve, where the log is all
// there is, logs an error when the server went from starting, ready or
// sleeping to failed, or failed for another reason than the attempt
// before (last; "" when that one did not fail); the same failure again
// at each retry is only worth debug.
func failLevel(reconnect bool, last, now string) slog.Level {
	switch {
	case !reconnect:
		return slog.LevelInfo
	case last != "" && reason(last) == reason(now):
		return slog.LevelDebug
	default:
		return slog.LevelError
	}
}

// reason is what an attempt's error says about why it failed, without
// the child's stderr lines it quotes: those often differ at each run
// (a pid, a time) while the failure is the same.
func reason(err string) string {
	r, _, _ := strings.Cut(err, stderrQuote)
	return r
}
