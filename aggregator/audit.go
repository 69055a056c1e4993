package aggregator

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/upstream"
)

// audited reports whether the audit trail keeps calls of method: the
// calls that act or read on the user's behalf, not lists or subscriptions.
func audited(method string) bool {
	return method == "tools/call" || method == "resources/read" || method == "prompts/get"
}

// audit hands one call of the client l (nil: none) to the trail
// (Options.Audit). It runs on the call's goroutine, so it only gathers
// what the call has at hand; the recorder builds and writes the line on
// its own goroutine. run is the code-mode run the call is part of ("":
// none), who the principal it came from.
func (a *Aggregator) audit(l *listener, start time.Time, run, who, server, method string, params, res json.RawMessage, err error) {
	rec := a.opts.Audit
	if rec == nil {
		return
	}
	c := audit.Call{Start: start, Run: run, Principal: who, Server: server, Method: method, Params: params, Result: res, Err: err}
	var rpc *upstream.RPCError
	if errors.As(err, &rpc) {
		c.ErrorCode = rpc.Code
	}
	switch {
	case l != nil && l.client != nil:
		c.Client, c.Session = l.client.Name(), l.client.ID()
	case l != nil && l.clientName != "":
		c.Client = l.clientName
	default:
		// A modern client's call sent as it came (the listener is
		// shared): its name is in the call's own _meta.
		c.Client = core.ClientName(params)
	}
	rec.Record(c)
}
