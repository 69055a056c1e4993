package aggregator

import (
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream"
)

// capResult applies the maxResultBytes of e's source to a result of the
// tool e for the client l: over the cap, its text is cut and kept whole
// for that client to read back the way via says (results.CutTool): with
// resources/read after a direct call, with the proxy tool after a call
// through it; a tool with an outputSchema keeps its structuredContent,
// cut only as the schema allows, so that clients that check it accept
// the result. The length check comes first, so a result under the cap is
// not decoded. With no client (nil l: the terminal's calls) the result
// passes whole.
func (a *Aggregator) capResult(l *listener, e *Entry, res json.RawMessage, via results.Via) json.RawMessage {
	src := e.src
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
	schema, _ := rawjson.Get(e.JSON, "outputSchema")
	out, err := results.CutTool(a.root().results, l.owner, res, int(limit), via, schema)
	if err != nil {
		// Not a result we can reshape, or too big to keep: the client
		// gets it as the server sent it.
		a.log.Warn("result not capped", "server", src.Name(), "bytes", len(res), "err", err)
		return res
	}
	return out
}

// readKept answers a read of a kept result for the client l that made it
// (nil: none, for whom nothing is kept): one slice, within the cap the
// result was cut under with reserve bytes to spare (what the proxy tool
// adds around it; 0 for resources/read).
func (a *Aggregator) readKept(l *listener, uri string, reserve int) (json.RawMessage, error) {
	if l == nil {
		return nil, fmt.Errorf("%w resource: %s: %w", ErrUnknown, uri, results.ErrNotFound)
	}
	res, err := results.ReadURI(a.root().results, l.owner, uri, reserve)
	if err != nil {
		return nil, fmt.Errorf("%w resource: %w", ErrUnknown, err)
	}
	return res, nil
}
