package aggregator

import (
	"context"
	"encoding/json"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/proxytool"
)

// This file serves the catalog to legacy clients (those that begin with
// initialize) through the session core: the session's life (Join, Ready,
// Initialized, RootsChanged) and the calls whose Caller is a
// core.Client; each client's listener is made from its core.Client.

// Join makes c a listener of a (and of the shared catalog, for a
// session's own), so that the relays reach it, until leave; a keeps which
// listener is cl's for the calls cl makes meanwhile (listenerOf).
func (c served) Join(cl *core.Client) (func(), error) {
	a := c.a
	owner, err := results.NewOwner()
	if err != nil {
		return nil, err
	}
	l := &listener{conn: legacyConn{cl}, owner: owner, client: cl, progress: cl.Progress}
	l.proxy = a.newProxy(proxyCatalog{a: a, l: l, send: cl.Options()})
	a.legacy.Store(cl, l)
	a.listeners.Store(l, struct{}{})
	if a.parent != nil {
		// The shared upstreams' notifications, requests and changes reach
		// this session through the shared catalog.
		a.parent.listeners.Store(l, struct{}{})
	}
	leave := func() {
		if a.parent != nil {
			a.parent.listeners.Delete(l)
		}
		a.listeners.Delete(l)
		a.legacy.Delete(cl)
		a.callers.forget(l)
		a.sessionEnded(l) // last, once it is no longer a listener: sessionlog.go, subscriptions.go
	}
	return leave, nil
}

// listenerOf is the listener Join made of cl; nil once it left (its
// session ended while a call was on its way).
func (c served) listenerOf(cl *core.Client) *listener {
	l, _ := c.a.legacy.Load(cl)
	listener, _ := l.(*listener)
	return listener
}

// legacyConn reaches a legacy client through its session.
type legacyConn struct{ cl *core.Client }

func (c legacyConn) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.cl.Request(ctx, method, params)
}
func (c legacyConn) Can(method string, params json.RawMessage) bool { return c.cl.Can(method, params) }
func (c legacyConn) Notify(method string, params json.RawMessage)   { c.cl.Notify(method, params) }
func (c legacyConn) ElicitURL() bool                                { return c.cl.ElicitURL() }
func (c legacyConn) ListChanged(kinds []Kind)                       { c.cl.ListChanged(coreLists(kinds)...) }
func (c legacyConn) Spawn(f func(ctx context.Context))              { c.cl.Spawn(f) }

// coreLists are the core's lists of kinds.
func coreLists(kinds []Kind) []core.List {
	lists := make([]core.List, 0, len(kinds))
	for _, k := range kinds {
		switch k {
		case KindTool:
			lists = append(lists, core.ListTools)
		case KindResource:
			lists = append(lists, core.ListResources)
		case KindPrompt:
			lists = append(lists, core.ListPrompts)
		}
	}
	return lists
}

func (c served) Ready(ctx context.Context, method string) {
	if c.a.exposeDirect() || method != "tools/list" {
		c.a.waitReady(ctx)
		return
	}
	// With expose proxy tools/list holds only the proxy tool and the
	// browser's tools, which need no upstream: answer once the first
	// catalog is built.
	c.a.waitBuilt(ctx)
}

// legacyCall answers a request of the client cl, whose listener Join
// made.
func (c served) legacyCall(ctx context.Context, cl *core.Client, method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	a := c.a
	l := c.listenerOf(cl)
	switch method {
	case "logging/setLevel":
		res, err := a.setLogLevel(ctx, l, params)
		return res, toRPCError(err, jsonrpc.CodeInvalidParams, a.opts.Redact)
	case "resources/subscribe", "resources/unsubscribe":
		a.waitReady(ctx)
		res, err := a.subscribe(ctx, l, method, params)
		return res, toRPCError(err, jsonrpc.CodeResourceNotFound, a.opts.Redact)
	}
	return a.serveCall(ctx, l, method, params)
}

// legacySend sends a tools/call of an upstream tool, or of the proxy
// tool, without waiting (sendTool, proxytool.Proxy.Send); false for any
// other call, or before the first catalog is complete.
func (c served) legacySend(ctx context.Context, cl *core.Client, method string, params json.RawMessage,
	done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	a := c.a
	if method != "tools/call" || !a.isReady() {
		return nil, false
	}
	name, err := paramString(params, "name")
	if err != nil {
		return nil, false
	}
	l := c.listenerOf(cl)
	if name == proxytool.Name && a.exposeProxy() {
		return a.proxyFor(l).Send(ctx, params, func(res json.RawMessage) {
			a.countProxyAnswer(ctx, res)
			done(res, nil)
		})
	}
	if !a.served(name) {
		return nil, false
	}
	return a.sendTool(ctx, l, cl.Options(), name, params, results.ViaRead, func(res json.RawMessage, err error) {
		res, rpcErr := a.toolOutcome(name, res, err)
		if rpcErr != nil {
			done(nil, rpcErr)
			return
		}
		done(res, nil)
	})
}

// Initialized lets servers already waiting for a login ask this client.
func (c served) Initialized(*core.Client) { c.a.offerLogins() }

func (c served) RootsChanged() { c.a.rootsChanged() }

func (c served) Modern() (*core.Server, error) { return c.a.Modern() }
