package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/mcpx/mcpx/upstream"
)

// statusLine is stderr for a command and its logger, one write at a
// time, with on a terminal one line kept at the bottom: what the command
// waits for. Anything else written (log lines) goes above that line, and
// the line is drawn again after.
type statusLine struct {
	mu   sync.Mutex
	w    io.Writer
	text string // shown now; "" for none
}

// clearLine moves to the start of the line and erases it.
const clearLine = "\r\x1b[K"

func (s *statusLine) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.text != "" {
		io.WriteString(s.w, clearLine)
	}
	n, err := s.w.Write(p)
	if s.text != "" && err == nil {
		io.WriteString(s.w, s.text)
	}
	return n, err
}

// set shows text as the status line; "" takes the line away.
func (s *statusLine) set(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if text == "" && s.text == "" {
		return
	}
	io.WriteString(s.w, clearLine+text)
	s.text = text
}

// spinnerWidth bounds the status line: a line wider than the terminal
// wraps, and the carriage return would then redraw only its last row.
const spinnerWidth = 72

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spinner shows, until ctx ends, which of the servers waited for (nil:
// all) are still starting and the seconds passed, redrawn a few times a
// second.
func (s *session) spinner(ctx context.Context, names []string) {
	line := s.stderr
	start := time.Now()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	defer line.set("")
	for frame := 0; ; frame++ {
		var starting []string
		for _, st := range s.agg.Upstreams() {
			if st.State == upstream.StateConnecting && (names == nil || slices.Contains(names, st.Name)) {
				starting = append(starting, st.Name)
			}
		}
		text := ""
		if len(starting) > 0 {
			text = fmt.Sprintf("%s waiting for %s to start (%ds)", spinnerFrames[frame%len(spinnerFrames)],
				strings.Join(starting, ", "), int(time.Since(start).Seconds()))
			text = ansi.Truncate(text, spinnerWidth, "…")
		}
		line.set(text)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// why says what a server that is not ready is doing or what went wrong:
// for one still starting, the step it waits for, for how long, and the
// last line it printed; for a failed one, its error (which quotes a
// child's last stderr lines from when it failed).
func why(st upstream.Status, now time.Time) string {
	if st.State != upstream.StateConnecting {
		return st.Err
	}
	msg := "starting"
	if st.Step != "" {
		msg = fmt.Sprintf("waiting for %s for %s", stepName(st.Step), now.Sub(st.StepSince).Round(100*time.Millisecond))
	}
	if st.LastLine != "" {
		msg += fmt.Sprintf("; last %s line: %s", st.LastStream, st.LastLine)
	}
	return msg
}

// stepName says a connect step as a person reads it.
func stepName(step string) string {
	switch step {
	case upstream.StepSpawn:
		return "the process to start"
	case upstream.StepConnect:
		return "the server to answer"
	case upstream.StepInitialize:
		return "its answer to initialize"
	case upstream.StepList:
		return "its tools, resources and prompts"
	}
	return step
}

// notReady is one line per server that failed or is still starting, for
// the end of a command: which servers the output lacks, and why.
func notReady(statuses []upstream.Status, now time.Time) []string {
	var out []string
	for _, st := range statuses {
		switch st.State {
		case upstream.StateConnecting:
			out = append(out, fmt.Sprintf("server %s is still starting: %s", st.Name, why(st, now)))
		case upstream.StateFailed:
			out = append(out, fmt.Sprintf("server %s failed: %s", st.Name, why(st, now)))
		case upstream.StateNeedsLogin:
			out = append(out, fmt.Sprintf("server %s needs a login: run mcpx auth login %s", st.Name, st.Name))
		}
	}
	return out
}
