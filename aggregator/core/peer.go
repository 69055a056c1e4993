package core

import (
	"context"
	"encoding/json"

	"github.com/mcpx/mcpx/callopt"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// Peer is the modern client behind one request, as a source sees it.
// Its methods are safe for concurrent use.
type Peer struct {
	Meta Meta
	// Route is set on the retry of a source's own input_required result
	// (a passthrough): the route the catalog gave, through SetRoute, for
	// the call that answered it. The catalog sends the retry there, to
	// the source that asked, whatever it now calls the tool. "" on any
	// other request.
	Route string
	// SetRoute records where the catalog sent a call, for a retry of the
	// input_required result it answers to reach the same source (Route).
	// The route is signed into the requestState: no client can alter it.
	// Nil where no retry can follow (completion/complete).
	SetRoute func(route string)
	// Via is the request's Request.Via, for the catalog's Sender, which
	// uses it only while it sends.
	Via *callopt.Options
	// method is the request's, for the error of a question it cannot
	// carry.
	method string
	// ask carries a question to the client; nil when the request cannot
	// carry any (completion/complete).
	ask func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// notify writes a notification ahead of the request's answer.
	notify func([]byte)
	// progress, when set, rewrites a progress notification's params for
	// the request waiting now (a bridged call's retry has its own
	// token); nil params drop it.
	progress func(params json.RawMessage) json.RawMessage
}

// Request asks the client something (sampling/createMessage,
// elicitation/create, roots/list) and waits for the answer. A question
// the client did not declare it can answer fails at once with
// MissingClientCapability, as it would fail a legacy client.
func (p *Peer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if p.ask == nil {
		return nil, jsonrpc.Errorf(CodeMethodNotFound, "%s cannot be asked of a client during %s", method, p.method)
	}
	if err := Allowed(p.Meta.Capabilities, method, params); err != nil {
		return nil, err
	}
	return p.ask(ctx, method, params)
}

// CanAsk reports whether the client can be asked anything during the
// request: it declared sampling, elicitation or roots, and the request
// is one that can carry a question. When it cannot, every Request fails
// at once, and a source need not route questions to this client.
func (p *Peer) CanAsk() bool {
	c := p.Meta.Capabilities
	return p.ask != nil && (c.Sampling || c.Elicitation || c.Roots)
}

// Notify sends a notification that belongs to the request (progress, a
// log message) ahead of its answer; it does not block. A log message
// below the request's logLevel, or of a request that set none, is
// dropped: the client did not ask for it (SEP-2575).
func (p *Peer) Notify(method string, params json.RawMessage) {
	if method == "notifications/message" && !p.wantsLog(params) {
		return
	}
	if method == "notifications/progress" && p.progress != nil {
		if params = p.progress(params); params == nil {
			return
		}
	}
	p.notify(notification(method, params))
}

// wantsLog reports whether the client asked for a log message of params'
// level.
func (p *Peer) wantsLog(params json.RawMessage) bool {
	if p.Meta.LogLevel == "" {
		return false
	}
	raw, err := rawjson.Get(params, "level")
	if err != nil {
		return false
	}
	level, ok := rawjson.String(raw)
	return ok && logLevelRank(level) >= logLevelRank(p.Meta.LogLevel)
}
