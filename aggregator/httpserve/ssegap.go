package httpserve

import (
	"bytes"
	"context"
	"time"
)

// progressGap is how long a legacy SSE stream waits, after writing a
// progress notification, before writing an event that is not progress
// (the answer the progress belongs to, typically).
//
// mcpx writes every progress event before the answer, in order. But the
// official TypeScript SDK's client handles a notification in a microtask
// and a response at once: when its SSE reader gets the last progress
// event and the answer in one read, the answer removes the progress
// handler first and the progress is dropped (the reference server loses
// the last step the same way, served alone over SSE). Its streamable HTTP
// client reads each event on its own, so only the legacy transport needs
// the gap; and only the event after progress waits, so it costs a call
// that reported progress at most progressGap, once.
const progressGap = 50 * time.Millisecond

// progressPrefix starts every progress notification the session core
// writes (core.Session.progress).
var progressPrefix = []byte(`{"jsonrpc":"2.0","method":"notifications/progress"`)

// gapAfterProgress tracks the last progress event written on one legacy
// SSE connection.
type gapAfterProgress struct {
	at time.Time // when the last event, a progress notification, was written; zero otherwise
}

// before waits, if msg must keep its distance from a progress event just
// written, until progressGap has passed or ctx is done.
func (g *gapAfterProgress) before(ctx context.Context, msg []byte) {
	isProgress := bytes.HasPrefix(msg, progressPrefix)
	if !g.at.IsZero() && !isProgress {
		if wait := progressGap - time.Since(g.at); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
	g.at = time.Time{}
	if isProgress {
		g.at = time.Now()
	}
}
