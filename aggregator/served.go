package aggregator

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/aggregator/core"
)

// served is the Aggregator as the session core serves it to clients of
// both eras: its core.Catalog and core.Sender, and, for legacy sessions,
// core.Legacy. A call's Caller says its era: a core.Client is a legacy
// session's (legacy.go), a core.Peer a modern request's (modern.go).
type served struct{ a *Aggregator }

var _ core.Legacy = served{}

// Call answers a request of the client from, in its era.
func (c served) Call(ctx context.Context, from core.Caller, method string, params json.RawMessage) (json.RawMessage, error) {
	switch from := from.(type) {
	case *core.Client:
		res, rpcErr := c.legacyCall(ctx, from, method, params)
		if rpcErr != nil {
			return nil, rpcErr
		}
		return res, nil
	case *core.Peer:
		return c.modernCall(ctx, from, method, params)
	}
	return nil, fmt.Errorf("%s from a %T: not a client of the core", method, from)
}

// Send sends a tools/call of the client from without waiting, in its era;
// ok is false, having done nothing, for a call Call must serve.
func (c served) Send(ctx context.Context, from core.Caller, method string, params json.RawMessage,
	done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	switch from := from.(type) {
	case *core.Client:
		return c.legacySend(ctx, from, method, params, done)
	case *core.Peer:
		return c.modernSend(ctx, from, method, params, done)
	}
	return nil, false
}
