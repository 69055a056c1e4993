package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// This file serves the catalog to modern clients (revision 2026-07-28)
// through the session core: the calls whose Caller is a core.Peer, and
// what only the modern era asks of the catalog (Tool, Watch).

// modern is the core serving modern requests, made on first use.
type modern struct {
	once  sync.Once
	srv   *core.Server
	owner string // of the results kept for modern clients (resultcap.go)
	err   error
	// quiet stands for every modern client in a call during which it
	// can be asked nothing and wants no log message (see quietClient).
	quiet quietClient
}

// Modern returns the session core that answers this catalog's modern
// requests (on stdio and HTTP alike). A session's own catalog (a profile
// on /sse/NAME, its own per-session servers) has its own core, so that a
// modern request in that session sees what the session sees.
func (a *Aggregator) Modern() (*core.Server, error) {
	m := &a.modern
	m.once.Do(func() {
		m.owner, m.err = results.NewOwner()
		if m.err != nil {
			return
		}
		m.quiet.l = quietListener(m.owner)
		m.quiet.l.idle = func() bool { return m.quiet.calls.Load() == 0 }
		a.listeners.Store(m.quiet.l, struct{}{})
		m.srv, m.err = core.NewServer(served{a}, &core.Options{
			Version: a.opts.Version, Secret: a.opts.StateSecret, Replica: a.opts.Replica, Logger: a.log,
			Capabilities: json.RawMessage(core.ServedCapabilities), Telemetry: a.tel,
		})
	})
	return m.srv, m.err
}

func (c served) List(ctx context.Context, method string) (json.RawMessage, error) {
	a := c.a
	if a.exposeDirect() || method != "tools/list" {
		a.waitReady(ctx) // as handle does
	} else {
		a.waitBuilt(ctx)
	}
	return a.listFor(ctx, method), nil
}

func (c served) Tool(name string) (json.RawMessage, bool) {
	e, ok := c.a.Catalog().Tool(name)
	if !ok || !c.a.served(name) {
		return nil, false
	}
	return e.JSON, true
}

// modernSend sends a modern client's tools/call of an upstream tool
// straight from the transport's read loop, as legacySend does a legacy
// session's, and reports false for any other. The client and what the
// call carries (the transport's batch and flusher from peer.Via, progress
// only for a call that asked for it, the upstream's input_required passed
// through) go to sendTool as values.
func (c served) modernSend(ctx context.Context, peer *core.Peer, method string, params json.RawMessage,
	done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	a := c.a
	if method != "tools/call" || !a.isReady() || peer.Route != "" {
		return nil, false // a passthrough retry goes where its route says: Call
	}
	name, err := paramString(params, "name")
	if err != nil || name == proxytool.Name || !a.served(name) {
		return nil, false
	}
	l := c.begin(peer)
	opts := upstream.CallOptions{PassInput: true} // passthrough.go
	if via := peer.Via; via != nil {
		opts.Batch, opts.Flusher = via.Batch, via.Flusher
	}
	if peer.Meta.ProgressToken != nil { // read with the rest of _meta: no scan of params
		opts.Progress = func(p json.RawMessage) { peer.Notify("notifications/progress", p) }
	}
	cancel, ok = a.sendTool(ctx, l, &opts, name, params, results.ViaRead, func(res json.RawMessage, err error) {
		c.end(l)
		if err == nil && peer.SetRoute != nil && inputRequired(res) {
			if r := a.routeOf(method, params); r != "" {
				peer.SetRoute(r)
			}
		}
		res, rpcErr := a.toolOutcome(name, res, err)
		if rpcErr != nil {
			done(nil, rpcErr)
			return
		}
		done(res, nil)
	})
	if !ok {
		c.end(l)
	}
	return cancel, ok
}

// begin returns the listener of peer for one call, a listener until end:
// its own when it can be asked something or wants log messages, else
// the one all such clients share.
func (c served) begin(peer *core.Peer) *listener {
	a := c.a
	if !peer.CanAsk() && peer.Meta.LogLevel == "" {
		a.modern.quiet.calls.Add(1)
		return a.modern.quiet.l
	}
	l := c.listener(peer)
	a.listeners.Store(l, struct{}{})
	return l
}

// end ends the call begin began.
func (c served) end(l *listener) {
	a := c.a
	if l == a.modern.quiet.l {
		a.modern.quiet.calls.Add(-1)
		return
	}
	a.listeners.Delete(l)
	a.callers.forget(l)
}

// quietClient is the listener that stands for every modern client in a
// call during which it can be asked nothing (it declared neither
// sampling, elicitation nor roots) and wants no log message: one
// listener for all of them rather than one made per call. It is a
// listener while any such call is in flight, so that a source that asks
// during one is refused as the client's own listener would refuse it,
// not routed to another client.
//
// It stays among the Aggregator's listeners from the core's start, and
// is idle (no client: listener.serving) while no such call is in flight,
// rather than stored and deleted around each call: that churn was most
// of what a modern call cost beyond a legacy one in the catalog
// (BenchmarkEraCall).
type quietClient struct {
	l     *listener
	calls atomic.Int64 // in flight
}

// quietListener is quietClient's listener: it refuses every request as
// a client that declared no capability is refused, and takes no
// notification.
func quietListener(owner string) *listener {
	return &listener{conn: quietConn{}, owner: owner}
}

// quietConn stands for a modern client that declared no capability: it
// refuses every request as the core refuses one to such a client, and
// takes no notification.
type quietConn struct{}

func (quietConn) Request(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return nil, upstreamError(core.Allowed(core.Capabilities{}, method, params))
}
func (quietConn) Can(string, json.RawMessage) bool { return false }
func (quietConn) Notify(string, json.RawMessage)   {}
func (quietConn) ElicitURL() bool                  { return false }
func (quietConn) ListChanged([]Kind)               {}

// upstreamError is the core's error as a source sees a client's.
func upstreamError(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return &upstream.RPCError{Code: ce.Code, Message: ce.Message, Data: ce.Data}
	}
	return err
}

// listener is a modern client, for as long as one call lasts, as the
// aggregator's relays see a served client: what the source asks of the
// client and its log messages reach peer.
func (c served) listener(peer *core.Peer) *listener {
	return &listener{conn: modernConn{peer}, owner: c.a.modern.owner, clientName: peer.Meta.ClientName()}
}

// modernConn reaches a modern client for as long as one call lasts,
// through the core's Peer: a question becomes an input_required result.
type modernConn struct{ peer *core.Peer }

func (c modernConn) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := c.peer.Request(ctx, method, params)
	return res, upstreamError(err)
}

func (c modernConn) Can(method string, params json.RawMessage) bool {
	return core.Allowed(c.peer.Meta.Capabilities, method, params) == nil
}

// Notify relays log messages only, which the core filters by the
// request's logLevel: a modern client hears of nothing else mid-call.
func (c modernConn) Notify(method string, params json.RawMessage) {
	if method == string(mcp.MethodNotificationMessage) {
		c.peer.Notify(method, params)
	}
}

func (c modernConn) ElicitURL() bool    { return c.peer.Meta.Capabilities.ElicitationURL }
func (c modernConn) ListChanged([]Kind) {}

// modernCall serves one request of a modern client as the catalog serves
// a legacy session's (serveCall), with the client as a listener for as
// long as the call lasts: what the source asks of the client meanwhile
// reaches peer, as it reaches a legacy session. A modern upstream's
// input_required passes through, and its retry goes back to that
// upstream (passthrough.go).
func (c served) modernCall(ctx context.Context, peer *core.Peer, method string, params json.RawMessage) (json.RawMessage, error) {
	a := c.a
	l := c.listener(peer)
	// The sources' progress reaches peer. (Send sets it in the call's
	// options instead, and only for a call that asks for progress.)
	l.progress = func(p json.RawMessage) { peer.Notify("notifications/progress", p) }
	pass := passesInput(method, params) // passthrough.go
	l.passInput = pass
	a.listeners.Store(l, struct{}{})
	defer a.listeners.Delete(l)
	defer a.callers.forget(l)
	var res json.RawMessage
	var rpcErr *jsonrpc.Error
	if pass && peer.Route != "" {
		res, rpcErr = a.routed(ctx, l, method, params, peer.Route)
	} else {
		res, rpcErr = a.serveCall(ctx, l, method, params)
	}
	if rpcErr == nil {
		if pass && peer.SetRoute != nil && inputRequired(res) {
			r := peer.Route
			if r == "" {
				r = a.routeOf(method, params)
			}
			if r != "" {
				peer.SetRoute(r)
			}
		}
		return res, nil
	}
	if method == "resources/read" && rpcErr.Code == jsonrpc.CodeResourceNotFound {
		// Revision 2026-07-28 answers an unknown resource with invalid
		// params, naming the URI.
		uri, _ := paramString(params, "uri")
		rpcErr.Code = jsonrpc.CodeInvalidParams
		rpcErr.Data, _ = json.Marshal(map[string]string{"uri": uri})
	}
	return nil, rpcErr
}

// Watch relays the catalog's changes to f: list changes of every kind,
// and the updates of uris, to which their sources are subscribed for as
// long as ctx lasts.
func (c served) Watch(ctx context.Context, uris []string, f func(method string, params json.RawMessage)) {
	a := c.a
	l := &listener{conn: listenConn{f}, owner: a.modern.owner}
	a.listeners.Store(l, struct{}{})
	sctx := context.WithoutCancel(ctx)
	for _, uri := range uris {
		p, _ := json.Marshal(map[string]string{"uri": uri})
		if _, err := a.subscribe(sctx, l, "resources/subscribe", p); err != nil {
			a.log.Debug("subscriptions/listen: subscribe", "uri", uri, "err", a.opts.Redact(err.Error()))
		}
	}
	context.AfterFunc(ctx, func() {
		a.listeners.Delete(l)
		a.callers.forget(l)
		a.sessionEnded(l) // its subscriptions end with it
	})
}

// listenConn is a subscriptions/listen stream as a client: it hears of
// list changes and of the updates of the resources it subscribed to, and
// answers no request.
type listenConn struct {
	f func(method string, params json.RawMessage)
}

func (listenConn) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &upstream.RPCError{Code: jsonrpc.CodeMethodNotFound, Message: "a subscriptions/listen stream answers no request"}
}
func (listenConn) Can(string, json.RawMessage) bool { return false }
func (listenConn) ElicitURL() bool                  { return false }

func (c listenConn) Notify(method string, params json.RawMessage) {
	if method == string(mcp.MethodNotificationResourceUpdated) {
		c.f(method, params)
	}
}

func (c listenConn) ListChanged(kinds []Kind) {
	for _, k := range kinds {
		c.f(string(listChangedMethod[k]), nil)
	}
}

var listChangedMethod = map[Kind]mcp.MCPMethod{
	KindTool:     mcp.MethodNotificationToolsListChanged,
	KindResource: mcp.MethodNotificationResourcesListChanged,
	KindPrompt:   mcp.MethodNotificationPromptsListChanged,
}
