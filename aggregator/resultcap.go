package aggregator

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// capResult applies the maxResultBytes of src to a tools/call result for
// the client in ctx: over the cap, its text is cut and kept whole for
// that client to read back (results.Cut). The length check comes first,
// so a result under the cap is not decoded. With no client in ctx (the
// terminal's calls) the result passes whole.
func (a *Aggregator) capResult(ctx context.Context, src Source, res json.RawMessage) json.RawMessage {
	if len(res) <= config.MinResultBytes {
		return res // before the lookup in ctx
	}
	l, _ := ctx.Value(listenerKey{}).(*listener)
	return a.capResultFor(l, src, res)
}

// capResultFor is capResult for the client l (nil: none).
func (a *Aggregator) capResultFor(l *listener, src Source, res json.RawMessage) json.RawMessage {
	if len(res) <= config.MinResultBytes {
		return res // under any cap: most results, at the cost of a compare
	}
	limit := a.cfg.Limits.MaxResultBytes
	if c, ok := src.(*upstream.Client); ok {
		limit = c.Config().MaxResultBytes
	}
	if limit <= 0 || int64(len(res)) <= limit {
		return res
	}
	if l == nil {
		return res
	}
	out, err := results.Cut(a.root().results, l.owner, res, int(limit))
	if err != nil {
		// Not a result we can reshape, or too big to keep: the client
		// gets it as the server sent it.
		a.log.Warn("result not capped", "server", src.Name(), "bytes", len(res), "err", err)
		return res
	}
	return out
}

// readKept answers resources/read of a kept result for the client in ctx
// that made it.
func (a *Aggregator) readKept(ctx context.Context, uri string) (json.RawMessage, error) {
	l, ok := ctx.Value(listenerKey{}).(*listener)
	if !ok {
		return nil, fmt.Errorf("%w resource: %s: %w", ErrUnknown, uri, results.ErrNotFound)
	}
	res, err := results.ReadURI(a.root().results, l.owner, uri)
	if err != nil {
		return nil, fmt.Errorf("%w resource: %w", ErrUnknown, err)
	}
	return res, nil
}
