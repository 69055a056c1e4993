package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/callopt"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/telemetry"
)

// Catalog is what the core serves, to clients of both eras: the
// aggregator's merged catalog. Its methods are called concurrently, from
// any goroutine.
type Catalog interface {
	// List returns the result of a list method (tools/list, prompts/list,
	// resources/list, resources/templates/list) as the catalog is now.
	List(ctx context.Context, method string) (json.RawMessage, error)
	// Call sends tools/call, prompts/get, resources/read or
	// completion/complete (and, from a legacy session, logging/setLevel,
	// resources/subscribe and resources/unsubscribe) to the source that
	// serves it and returns its result. from is the client the request
	// came from: what the source asks of the client meanwhile goes to
	// from.Request, its progress and log messages to from.Notify. A
	// JSON-RPC error for the client is an *Error.
	Call(ctx context.Context, from Caller, method string, params json.RawMessage) (json.RawMessage, error)
	// Tool returns the definition of the tool served as name.
	Tool(name string) (json.RawMessage, bool)
	// Watch calls f with each change notification the catalog relays
	// (notifications/tools/list_changed, .../prompts/list_changed,
	// .../resources/list_changed, notifications/resources/updated) until
	// ctx is done; f must not block.
	// With uris, the sources of those resources are subscribed to them
	// for as long as ctx lasts.
	Watch(ctx context.Context, uris []string, f func(method string, params json.RawMessage))
}

// Sender is a Catalog that takes a call without a goroutine waiting for
// its answer (an upstream over stdio): done is called on the source's
// reader and must not block. ok is false, having done nothing, for a
// call it cannot send so; Call then serves it. cancel ends the call early.
type Sender interface {
	Send(ctx context.Context, from Caller, method string, params json.RawMessage,
		done func(json.RawMessage, error)) (cancel func(error), ok bool)
}

// A Caller is the client a request came from, as the catalog reaches it
// while serving the request: a legacy session's *[Client], for the
// session's life, or a modern request's *[Peer], for the request's. A
// catalog that serves the eras differently tells them apart by type.
type Caller interface {
	// Request asks the client something (sampling/createMessage,
	// elicitation/create, roots/list) and waits for the answer; a
	// question the client did not declare it can answer fails at once.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends the client a notification: for a Peer, one that
	// belongs to its request (progress, a log message).
	Notify(method string, params json.RawMessage)
}

var (
	_ Caller = (*Client)(nil)
	_ Caller = (*Peer)(nil)
)

// Options configure a [Server]; nil means defaults.
type Options struct {
	// Name and Version identify mcpx in server/discover and in each
	// result's _meta; "" means "mcpx" and "dev".
	Name, Version string
	// Capabilities is the capabilities object server/discover declares;
	// nil means tools, prompts, resources and completions.
	Capabilities json.RawMessage
	// Secret signs requestState so that replicas verify each other's;
	// "" means a key drawn when the process starts.
	Secret string
	// Replica names this process among replicas behind a load balancer.
	// A requestState it mints then starts with the name and "~", which
	// the balancer reads to send the retry back here, where the upstream
	// call waits (docs/serve-http.md); "" adds nothing.
	Replica string
	// StateTTL is how long an input_required result's requestState is
	// honoured, and how long an upstream call waits for the retry that
	// answers it; zero means 10 minutes.
	StateTTL time.Duration
	// Gather is how long the core waits, after an upstream asked the
	// client one thing, for the other things it asks at the same time
	// (an upstream asking for several inputs sends them together), so
	// they go out in one input_required result; zero means 25ms.
	Gather time.Duration
	// CacheTTL is the ttlMs of list results and server/discover; zero
	// means 0 (see docs/protocol.md: the catalog changes whenever an
	// upstream's does, and subscriptions/listen says when).
	CacheTTL time.Duration
	// Logger receives the core's diagnostics; nil discards them.
	Logger *slog.Logger
	// Telemetry records the server span and duration of each request
	// served over HTTP (by the transport, through [Server.Telemetry]);
	// nil records nothing. Over stdio the legacy session that carries the
	// request records them.
	Telemetry *telemetry.Telemetry
}

// Server answers modern requests on a [Catalog]. Safe for concurrent use.
type Server struct {
	cat        Catalog
	o          Options
	states     *States
	serverInfo []byte // the _meta member every result carries
	discover   []byte

	mu    sync.Mutex
	calls map[string]*call // calls waiting for a client's answers, by id
}

// Tool returns the Tool object of the tool the catalog serves as name,
// for a transport that checks a request against it (the HTTP transport's
// Mcp-Param headers).
func (s *Server) Tool(name string) (json.RawMessage, bool) { return s.cat.Tool(name) }

// Telemetry is where a transport records the server span and duration of
// each request it serves; nil records nothing.
func (s *Server) Telemetry() *telemetry.Telemetry { return s.o.Telemetry }

// Logger is where a transport writes the core's diagnostics.
func (s *Server) Logger() *slog.Logger { return s.o.Logger }

// NewServer returns a Server over cat.
func NewServer(cat Catalog, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "mcpx"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Capabilities == nil {
		o.Capabilities = json.RawMessage(`{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"completions":{},"logging":{}}`)
	}
	if o.StateTTL <= 0 {
		o.StateTTL = 10 * time.Minute
	}
	if o.Gather <= 0 {
		o.Gather = 25 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	states, err := NewStates(o.Secret, o.StateTTL)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(o.Replica, "~.") {
		return nil, fmt.Errorf("replica name %q: it may not contain '~' or '.'", o.Replica)
	}
	states.replica = o.Replica
	info, _ := json.Marshal(map[string]string{"name": o.Name, "version": o.Version})
	s := &Server{cat: cat, o: o, states: states, calls: map[string]*call{}}
	s.serverInfo = append(append([]byte(`"_meta":{"`+metaServerInfo+`":`), info...), '}')
	versions, _ := json.Marshal(SupportedVersions())
	s.discover = fmt.Appendf(nil, `{"supportedVersions":%s,"capabilities":%s,%s,"ttlMs":%d,"cacheScope":"public"}`,
		versions, o.Capabilities, s.serverInfo, o.CacheTTL.Milliseconds())
	return s, nil
}

// removed are the methods of the legacy era that revision 2026-07-28
// dropped: a modern request for one is answered method-not-found.
var removed = map[string]bool{"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "notifications/initialized": true}

// Request is one decoded modern request.
type Request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Meta   Meta
	// Via is what a call sent from a legacy session's read loop carries
	// (its batch and its output as the flusher: Client.Options), passed
	// through Peer.Via to the catalog's Sender; nil: nothing. Only the
	// Sender reads it.
	Via *callopt.Options

	// direct is the Peer of a call sendDirect sends, made with the
	// request rather than on its own: one allocation fewer per call.
	direct Peer
}

// Decode checks a modern request's _meta and returns the request.
func Decode(id json.RawMessage, method string, params json.RawMessage) (*Request, *Error) {
	meta, err := ParseMeta(params)
	if err != nil {
		return nil, err
	}
	return &Request{ID: id, Method: method, Params: params, Meta: meta}, nil
}

// Handle answers one modern request: its result (with resultType and
// serverInfo) or its error. notify receives, ahead of the answer, the
// notifications that belong to the request (progress, log messages, the
// stream of subscriptions/listen); it must not block. subscriptions/listen
// returns only when ctx is done, with a nil result and error: its stream
// simply ends.
func (s *Server) Handle(ctx context.Context, req *Request, notify func([]byte)) (json.RawMessage, *Error) {
	switch req.Method {
	case "server/discover":
		return s.discover, nil
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		res, err := s.cat.List(ctx, req.Method)
		if err != nil {
			return nil, asError(err)
		}
		return s.complete(res, true), nil
	case "tools/call", "prompts/get", "resources/read":
		type answer struct {
			res json.RawMessage
			e   *Error
		}
		done := make(chan answer, 1)
		s.serveCall(ctx, req, notify, func(res json.RawMessage, e *Error, _ bool) { done <- answer{res, e} })
		a := <-done
		return a.res, a.e
	case "completion/complete":
		res, err := s.cat.Call(ctx, &Peer{Meta: req.Meta, method: req.Method, notify: notify}, req.Method, req.Params)
		if err != nil {
			return nil, asError(err)
		}
		return s.complete(res, false), nil
	case "subscriptions/listen":
		return nil, s.listen(ctx, req, notify)
	}
	if removed[req.Method] {
		return nil, jsonrpc.Errorf(CodeMethodNotFound, "method not found: %s is not part of revision %s", req.Method, Modern)
	}
	return nil, jsonrpc.Errorf(CodeMethodNotFound, "method not found: %s", req.Method)
}

// Serve answers one modern request through respond, as Handle does, but
// without blocking: a tools/call a Sender takes is answered from the
// source's reader, any other request from a goroutine of its own. A
// transport's read loop calls it.
//
// cancel ends the request's work as ctx ending does; respond is still
// called. A transport that keeps its own record of each request passes a
// ctx that never ends and cancels through it: a context per request, and
// the watches on it, cost a stdio call more than the rest of the core
// (BenchmarkEraCall in package aggregator). After the answer, cancel
// does nothing.
func (s *Server) Serve(ctx context.Context, req *Request, notify func([]byte), respond Respond) (cancel func(cause error)) {
	switch req.Method {
	case "tools/call", "prompts/get", "resources/read":
		return s.serveCall(ctx, req, notify, respond)
	}
	ctx, stop := context.WithCancelCause(ctx)
	go func() {
		defer stop(nil)
		res, e := s.Handle(ctx, req, notify)
		respond(res, e, false)
	}()
	return stop
}

// asError is the JSON-RPC error for a catalog's failure.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// isEmptyObject reports whether rest (what follows an object's '{') is
// only space and the closing brace.
func isEmptyObject(rest []byte) bool {
	for _, c := range rest {
		switch c {
		case ' ', '\t', '\n', '\r':
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}
