package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// This file relays what flows the other way: requests upstreams send to
// the client (sampling, elicitation, roots), their log messages and
// resource updates (to the sessions that want them: see sessionlog.go and
// subscriptions.go), and the client's settings that every upstream must
// hear (roots changes; the log level is in sessionlog.go).

// listener is a served client as the catalog keeps it: what reaches the
// client (conn), and what the catalog keeps for it.
type listener struct {
	// conn reaches the client; nil: none (it can be asked nothing and is
	// told nothing).
	conn clientConn
	// logLevel is its logging/setLevel as an index into logLevelNames
	// plus one; 0 until it sets one (sessionlog.go).
	logLevel atomic.Int32
	// owner keys the results kept for this client (resultcap.go): only it
	// can read them back.
	owner string
	// client is the legacy client served, for the audit trail's client
	// and session; nil for a modern one.
	client *core.Client
	// clientName is a modern client's name (its request's clientInfo),
	// for the audit trail; a modern request has no session.
	clientName string
	// progress is where the sources' progress for this client's calls
	// goes (upstream.CallOptions.Progress); nil: nowhere.
	progress func(params json.RawMessage)
	// passInput is set on a modern client's listener for a call that
	// reaches its upstream directly: the upstream's input_required is the
	// client's answer, as it came (passthrough.go).
	passInput bool
	// proxy is the proxy tool as this client calls it (proxyFor); nil:
	// made when used.
	proxy *proxytool.Proxy
	// idle, when set, reports that the listener stands for no client
	// now, though it is among the listeners (quietClient between calls):
	// nothing is routed to it then.
	idle func() bool
}

// clientConn is what reaches one served client: the session core's
// Client of a legacy one (legacyConn), the Peer of a modern call
// (modernConn), or a stand-in that answers nothing for a modern call
// that cannot be asked (quietConn) and for a subscriptions/listen stream
// (listenConn).
type clientConn interface {
	// Request asks the client (sampling, elicitation, roots) and waits
	// for its answer.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Can reports whether the client declared the capability a request
	// to it needs (sampling, elicitation and its URL mode, roots).
	Can(method string, params json.RawMessage) bool
	// Notify relays a notification to the client.
	Notify(method string, params json.RawMessage)
	// ElicitURL reports whether the client declared URL-mode
	// elicitation.
	ElicitURL() bool
	// ListChanged tells the client the lists of kinds changed.
	ListChanged(kinds []Kind)
}

// A spawner is a clientConn that runs f for as long as its client is
// served (a legacy session), for what asks the client on its own (a
// login: login.go).
type spawner interface {
	Spawn(f func(ctx context.Context))
}

func (l *listener) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if l.conn == nil {
		return nil, &upstream.RPCError{Code: jsonrpc.CodeMethodNotFound, Message: "no MCP client to answer " + method}
	}
	return l.conn.Request(ctx, method, params)
}

func (l *listener) can(method string, params json.RawMessage) bool {
	return l.conn != nil && l.conn.Can(method, params)
}

func (l *listener) notify(method string, params json.RawMessage) {
	if l.conn != nil {
		l.conn.Notify(method, params)
	}
}

func (l *listener) elicitURL() bool { return l.conn != nil && l.conn.ElicitURL() }

func (l *listener) listChanged(kinds []Kind) {
	if l.conn != nil {
		l.conn.ListChanged(kinds)
	}
}

// spawn runs f for as long as l's client is served, and reports false,
// having done nothing, when its client has no such lifetime.
func (l *listener) spawn(f func(ctx context.Context)) bool {
	s, ok := l.conn.(spawner)
	if ok {
		s.Spawn(f)
	}
	return ok
}

// options is what a request made for l carries to an upstream; l may be
// nil (no served client: nothing).
func (l *listener) options() upstream.CallOptions {
	if l == nil {
		return upstream.CallOptions{}
	}
	return upstream.CallOptions{Progress: l.progress, PassInput: l.passInput}
}

// serving reports whether l stands for a client now (see idle).
func (l *listener) serving() bool { return l.idle == nil || !l.idle() }

// client returns a served client for which can holds, or nil when none
// is connected.
func (a *Aggregator) client(can func(*listener) bool) *listener {
	var l *listener
	a.listeners.Range(func(k, _ any) bool {
		if c := k.(*listener); c.serving() && can(c) {
			l = c
			return false
		}
		return true
	})
	return l
}

// serverRequest passes an upstream's request to the client.
func (a *Aggregator) serverRequest(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	if !a.opts.Serving {
		return terminalRequest(method)
	}
	l := a.clientFor(server, method, params)
	if l == nil {
		return nil, &upstream.RPCError{Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("no MCP client connected to mcpx declared it can answer %s", method)}
	}
	a.log.Debug("relaying a request to the client", "server", server, "method", method)
	return l.request(ctx, method, params)
}

// terminalRequest answers an upstream's request to the client when mcpx
// serves none (a command in a terminal): there are no roots to list, and
// no one to ask for a sampling or an elicitation, which fails the call
// that needed one with an error that says so.
func terminalRequest(method string) (json.RawMessage, error) {
	if method == string(mcp.MethodListRoots) {
		return json.RawMessage(`{"roots":[]}`), nil
	}
	return nil, &upstream.RPCError{Code: jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("mcpx runs in a terminal here, with no MCP client to answer %s: use the tool from an MCP client of mcpx serve", method)}
}

// serverNotification passes an upstream's notification to the served
// sessions that want it. A log message names its upstream in logger
// ("server" or "server/logger").
func (a *Aggregator) serverNotification(server, method string, params json.RawMessage) {
	if method == string(mcp.MethodNotificationMessage) {
		var p map[string]json.RawMessage
		if json.Unmarshal(params, &p) == nil {
			var logger string
			_ = json.Unmarshal(p["logger"], &logger)
			if logger == "" {
				logger = server
			} else {
				logger = server + "/" + logger
			}
			p["logger"], _ = json.Marshal(logger)
			params = marshalRaw(p, params)
		}
	}
	wants := a.relayFilter(method, params) // sessionlog.go, subscriptions.go
	a.listeners.Range(func(k, _ any) bool {
		if l := k.(*listener); wants(l) {
			l.notify(method, params)
		}
		return true
	})
}

// rootsChanged tells every upstream that the client's roots changed.
func (a *Aggregator) rootsChanged() {
	for _, c := range a.sessionClients() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := c.Notify(ctx, string(mcp.MethodNotificationRootsListChanged), nil); err != nil {
				a.log.Debug("roots/list_changed", "server", c.Name(), "err", err)
			}
		}()
	}
}

// complete routes completion/complete to the upstream that owns the prompt
// or resource template, with the prompt's original name, for the served
// client l (nil: none), through do like every other request: it
// is the client's call on that upstream (so that a question the upstream
// asks meanwhile reaches l) and gets its span.
func (a *Aggregator) complete(ctx context.Context, l *listener, params json.RawMessage) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		return nil, fmt.Errorf("%w: params must be an object", ErrInvalidParams)
	}
	var ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if err := json.Unmarshal(p["ref"], &ref); err != nil {
		return nil, fmt.Errorf("%w: ref must be {type, name} or {type, uri}", ErrInvalidParams)
	}
	c := a.Catalog()
	switch ref.Type {
	case "ref/prompt":
		e, ok := c.Prompt(ref.Name)
		if !ok {
			return nil, fmt.Errorf("%w prompt %q", ErrUnknown, ref.Name)
		}
		var r map[string]json.RawMessage
		_ = json.Unmarshal(p["ref"], &r)
		r["name"] = json.RawMessage(quote(e.Original))
		p["ref"] = marshalRaw(r, p["ref"])
		return a.do(ctx, sourceCall{l: l, src: e.src, method: "completion/complete", params: marshalRaw(p, params)})
	case "ref/resource":
		for _, e := range c.ResourceTemplates {
			if e.Name == ref.URI {
				return a.do(ctx, sourceCall{l: l, src: e.src, method: "completion/complete", params: params})
			}
		}
		if e, ok := c.Resource(ref.URI); ok {
			return a.do(ctx, sourceCall{l: l, src: e.src, method: "completion/complete", params: params})
		}
		return nil, fmt.Errorf("%w resource %q", ErrUnknown, ref.URI)
	default:
		return nil, fmt.Errorf("%w: ref.type %q: want ref/prompt or ref/resource", ErrInvalidParams, ref.Type)
	}
}
