package upstream

import (
	"log/slog"
	"slices"
	"testing"
	"time"
)

// TestBackoffSchedule: the wait doubles from the minimum with each
// failure in a row, stays at the cap, and starts again from the minimum
// after a reset.
func TestBackoffSchedule(t *testing.T) {
	b := newBackoff(500*time.Millisecond, 5*time.Minute)
	var got []time.Duration
	for range 12 {
		got = append(got, b.wait())
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute}
	if !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	b.reset()
	if d := b.wait(); d != 500*time.Millisecond {
		t.Errorf("first wait after reset = %v, want 500ms", d)
	}
	if d := b.wait(); d != time.Second {
		t.Errorf("second wait after reset = %v, want 1s", d)
	}
}

// TestDefaultMaxBackoff: without options, a broken server is tried at
// most every five minutes in the end, not every 30s forever.
func TestDefaultMaxBackoff(t *testing.T) {
	o := (*Options)(nil).withDefaults()
	if o.MinBackoff != 500*time.Millisecond || o.MaxBackoff != 5*time.Minute {
		t.Errorf("default backoff %v..%v, want 500ms..5m", o.MinBackoff, o.MaxBackoff)
	}
}

// TestFailLevel: under serve a failure is an error when the server was
// not failing or fails for another reason; the same failure again is
// debug, however the quoted stderr lines differ. A one-shot command
// logs at info.
func TestFailLevel(t *testing.T) {
	for _, tc := range []struct {
		reconnect bool
		last, now string
		want      slog.Level
	}{
		{true, "", "initialize: exit status 3; stderr: fixture[1]: bad", slog.LevelError},
		{true, "initialize: exit status 3; stderr: fixture[1]: bad", "initialize: exit status 3; stderr: fixture[2]: bad", slog.LevelDebug},
		{true, "initialize: exit status 3", "initialize: exit status 3", slog.LevelDebug},
		{true, "initialize: exit status 3", "initialize: no answer within 10s", slog.LevelError},
		{true, "exit status 4", "initialize: exit status 3", slog.LevelError},
		{false, "", "initialize: exit status 3", slog.LevelInfo},
		{false, "initialize: exit status 3", "initialize: exit status 3", slog.LevelInfo},
	} {
		if got := failLevel(tc.reconnect, tc.last, tc.now); got != tc.want {
			t.Errorf("failLevel(%v, %q, %q) = %v, want %v", tc.reconnect, tc.last, tc.now, got, tc.want)
		}
	}
}
