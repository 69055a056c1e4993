package upstream

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx/mcpx/config"
)

// lineRecorder keeps the messages logged through it.
type lineRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *lineRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *lineRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, rec.Message)
	return nil
}
func (r *lineRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *lineRecorder) WithGroup(string) slog.Handler      { return r }

// TestStderrLinesAcrossWaits: the stderr reader, which holds no buffer
// while the child is quiet, logs lines whole however they arrive: split
// across writes, several in one, one after a quiet spell, a last one
// without its newline, an overlong one cut.
func TestStderrLinesAcrossWaits(t *testing.T) {
	rec := &lineRecorder{}
	c := New(config.Server{Name: "x"}, &Options{Logger: slog.New(rec)})
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.logStderr(r)
	}()
	long := strings.Repeat("y", maxLogLine+10)
	for _, chunk := range []string{"first\n", "par", "tial\n", "two\nthree\n", long + "\n", "after\n", "last"} {
		if _, err := io.WriteString(w, chunk); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-done
	want := []string{"first", "partial", "two", "three", long[:maxLogLine] + "…", "after", "last"}
	if strings.Join(rec.lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q,\nwant %q", rec.lines, want)
	}
}
