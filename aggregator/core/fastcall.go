package core

import (
	"context"
	"encoding/json"
)

// sendCall starts a tools/call of an upstream tool straight from the
// read loop and has the upstream's reader deliver the answer to done,
// which must not block. The request is written by this goroutine (or
// held for the read loop's batch), and the answer is written to the
// client by the reader's (held for the outbox's next Flush): no goroutine
// per call and no hand-off between goroutines, which were half of a
// call's cost over a byte-copying relay (BenchmarkCallSequential).
//
// The proxy tool's calls of a tool go the same way (proxytool.Proxy.Send).
// cancel ends the call early; ctx is the read loop's, which never ends
// (see running). ok is false, having done nothing, when the call needs
// handle: any other method, or a call the catalog cannot send so
// (Sender.Send).
func (s *Session) sendCall(ctx context.Context, m Message, done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	if m.Method != "tools/call" {
		return nil, false
	}
	// The call carries the client's Options: progress, the read loop's
	// batch (flushed by the read loop) and the outbox as its flusher.
	return s.cat.Send(ctx, s.client, m.Method, m.Params, done)
}
