package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream"
	"github.com/mcpx/mcpx/upstream/frame"
)

// ServeStdio serves the catalog as one MCP server on a stream of
// newline-delimited JSON-RPC messages (an MCP client's stdin and stdout)
// until in ends, a write fails, or ctx is done.
//
// mcpx answers every method itself rather than through mcp-go's
// MCPServer: the catalog methods (lists, tools/call, resources/read,
// prompts/get) from raw JSON, because mcp-go's typed structs drop fields
// an upstream sent, and the few of the session (initialize, ping) by hand,
// because MCPServer decoded each message again, lost digits of large ids,
// and its package pulls a JSON-schema library whose initialisation alone
// cost 23 ms of every start. Each line is read in one scan (see
// parseMessage); one writer keeps every message whole and in order; there
// is no cap on concurrent calls, and the session is not a package global.
func (a *Aggregator) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	newOut := func(ctx context.Context) output { return newOutbox(ctx, out, a.log, a.cfg.MaxMessageBytes) }
	return a.serveSession(ctx, "", "stdio", newOut, func(s *legacySession) error {
		return s.readLoop(s.rctx, in)
	})
}

// output is where a legacy session's messages go: its transport, told
// what each one is (an answer to an id, progress, anything else), so that
// it never reads the session's output back. stdio writes them all to one
// stream (outbox); HTTP routes each to a stream of its session
// (httpOut).
type output interface {
	upstream.Flusher
	// result answers id, waiting for room while the client reads slowly.
	result(id, result json.RawMessage)
	// hold answers id from an upstream's reader: it never waits, and
	// may keep the answer until Flush.
	hold(id, result json.RawMessage)
	// error answers id with an error; it never waits.
	error(id json.RawMessage, code int, message string, data json.RawMessage)
	// raw sends a message that must not be lost (a request to the
	// client, a list change), waiting for room.
	raw(msg []byte)
	// notify sends a notification without ever waiting: it is dropped
	// when the client has fallen a whole queue behind.
	notify(msg []byte)
	// progress is notify for an upstream's progress with params.
	progress(params json.RawMessage, msg []byte)
	// run writes until close; a failed write ends the session by cancel.
	run(cancel context.CancelCauseFunc)
	// close writes what is queued within the time given and stops.
	close(within time.Duration) bool
}

// serveSession serves one legacy client, whose transport is newOut's
// output and run: run delivers the client's messages (legacySession.Handle)
// until it returns (io.EOF: the client sent all it had), or ctx is done.
// The session is shown profile view ("": the catalog as a shows it), on
// an Aggregator of its own over a's sources when it has servers of its
// own (perSession) or a profile. id names it in the audit trail and in
// spans ("stdio", or an HTTP session's Mcp-Session-Id).
//
// mcpx answers every method itself rather than through mcp-go's
// MCPServer: the catalog methods (lists, tools/call, resources/read,
// prompts/get) from raw JSON, because mcp-go's typed structs drop fields
// an upstream sent, and the few of the session (initialize, ping) by hand,
// because MCPServer decoded each message again, lost digits of large ids,
// and its package pulls a JSON-schema library whose initialisation alone
// cost 23 ms of every start. Each message is read in one scan (see
// parseMessage); one writer keeps every message whole and in order; there
// is no cap on concurrent calls, and the session is not a package global.
func (a *Aggregator) serveSession(ctx context.Context, view, id string, newOut func(context.Context) output,
	run func(*legacySession) error) error {
	if own := a.sessionCatalog(view); own != nil {
		own.Start(ctx)
		defer a.children.Delete(own)
		defer own.Close()
		return own.serveSession(ctx, "", id, newOut, run)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	s := &legacySession{a: a, out: newOut(ctx), sess: newSession(id), inflight: map[string]*running{}, listed: map[Kind]bool{}, calls: map[string]chan message{},
		inputEnded: make(chan struct{})}
	owner, ownerErr := results.NewOwner()
	if ownerErr != nil {
		return ownerErr
	}
	l := &listener{owner: owner, listChanged: s.listChanged, request: s.clientRequest, notify: s.notify,
		elicitURL: s.elicitURL, spawn: func(f func(context.Context)) { s.spawn(ctx, f) }, sess: s.sess,
		progress: s.progress}
	s.l = l
	s.send = upstream.CallOptions{Progress: s.progress, Batch: &s.batch, Flusher: s.out}
	l.proxy = proxytool.New(proxyCatalog{a: a, l: l, send: &s.send})
	a.listeners.Store(l, struct{}{})
	defer a.sessionEnded(l) // last, once it is no longer a listener: sessionlog.go, subscriptions.go
	defer a.callers.forget(l)
	defer a.listeners.Delete(l)
	if a.parent != nil {
		// The shared upstreams' notifications, requests and changes reach
		// this session through the shared catalog.
		a.parent.listeners.Store(l, struct{}{})
		defer a.parent.listeners.Delete(l)
	}

	go s.out.run(cancel)

	// A read from a pipe cannot be interrupted, so the transport runs on
	// its own and a signal (ctx) does not wait for the client's next line.
	readErr := make(chan error, 1)
	s.rctx = ctx
	s.done, s.sendCtx = ctx.Done(), context.WithoutCancel(s.rctx)
	go func() { readErr <- run(s) }()
	var err error
	select {
	case err = <-readErr:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	// The end takes at most two steps of Drain (and the Linger of an
	// input that ended), as shutdownTimeout counts them.
	end := time.Now().Add(2 * a.opts.Drain)
	close(s.inputEnded)
	if errors.Is(err, io.EOF) {
		// The client sent all it had: a pipe closed after its last
		// request (printf ... | mcpx serve --stdio) still expects the
		// answers, as from any MCP server. Those that come within a
		// step and the Linger are written.
		end = end.Add(a.opts.Linger)
		s.awaitAnswers(ctx, a.opts.Drain+a.opts.Linger)
		// Answers an upstream's reader holds for its next Flush
		// (fastcall.go) go out with the rest.
		s.out.Flush()
	}
	// The client is gone or we are shutting down: stop what is in flight
	// and let the writer flush what is already queued, within what is
	// left of the two steps: a call stuck on an upstream is released when
	// the upstream is closed, and a client that stopped reading never
	// will.
	cancel(err)
	s.mu.Lock()
	s.closing = true
	stop := make([]*running, 0, len(s.inflight))
	for _, r := range s.inflight {
		stop = append(stop, r)
	}
	s.mu.Unlock()
	for _, r := range stop { // those answered from an upstream's reader watch no context
		r.cancel()
	}
	if !waitWithin(&s.wg, time.Until(end)/2) {
		a.log.Warn("calls still running after the client left; leaving them to the shutdown")
	}
	s.out.close(time.Until(end))
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// awaitAnswers waits for the requests read from the client to be
// answered, for at most d or until ctx is done. The transport has
// stopped handing messages over: no request starts any more.
func (s *legacySession) awaitAnswers(ctx context.Context, d time.Duration) {
	answered := make(chan struct{})
	go func() {
		s.answering.Wait()
		close(answered)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-answered:
	case <-t.C:
		s.a.log.Warn("the client closed its input: requests still running are cancelled unanswered", "after", d)
	case <-ctx.Done():
	}
}

// legacySession is the core of one legacy (initialize) session, whatever
// its transport: it handles one decoded message at a time (Handle) and
// hands what it sends to its output. Its state: the client's initialize,
// the requests in flight, our requests to the client, the lists the client
// fetched.
type legacySession struct {
	a    *Aggregator
	sess *session
	l    *listener // this client, as the aggregator's relays see it
	out  output
	// send is what the calls Handle sends carry: progress to the client,
	// the batch, and the output as the flusher of answers held on an
	// upstream's reader (fastcall.go).
	send upstream.CallOptions
	// rctx is what the session's requests run under.
	rctx context.Context
	// batch gathers the requests Handle sends (fastcall.go) until the
	// transport calls flushBatch; only the one goroutine handling
	// messages uses it.
	batch upstream.Batch
	wg    sync.WaitGroup // requests and spawned tasks running
	// answering counts the requests read and not yet answered; only
	// Handle adds to it.
	answering sync.WaitGroup
	// sendCtx is what Handle sends calls under: the session's
	// values, but no end (see running); done is the session's end.
	sendCtx context.Context
	done    <-chan struct{}

	// inputEnded is closed when the client's input has ended or the
	// session ends: the client can no longer answer a request of ours.
	inputEnded chan struct{}

	mu       sync.Mutex
	inflight map[string]*running     // by raw request id
	closing  bool                    // no new requests start
	initSeen atomic.Bool             // an initialize request was read
	calls    map[string]chan message // our requests to the client, by id
	callSeq  int
	listed   map[Kind]bool // lists fetched since the last list_changed
}

// message is a client's JSON-RPC message as a session handles it: the
// envelope, decoded once, and the era it was found to belong to.
type message struct {
	jsonrpc.Message
	// modern marks a request of revision 2026-07-28 (its _meta names
	// the protocol version), which the session core answers.
	modern bool
}

// readLoop reads the client's messages, each of at most maxMessageBytes:
// a longer one is read through without being kept and answered with an
// error (see tooLong).
func (s *legacySession) readLoop(ctx context.Context, in io.Reader) error {
	r := frame.NewReader(in, s.a.cfg.MaxMessageBytes)
	for {
		line, err := r.Next()
		var tl *frame.TooLongError
		if errors.As(err, &tl) {
			s.tooLong(tl)
			line, err = nil, nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			// A copy: the reader reuses its buffer, and handlers keep
			// the line.
			s.handleLine(ctx, bytes.Clone(line))
		}
		if !r.HasLine() {
			// Requests sent while lines were waiting go out now, one
			// write per upstream, before the next read may wait.
			s.flushBatch()
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
}

// parseMessage reads the envelope of a JSON-RPC message in one scan, no
// decoding: params, result and error stay the bytes of line.
func parseMessage(line []byte) (message, error) {
	var m message
	if !rawjson.Valid(line) {
		return m, json.Unmarshal(line, &m) // the syntax error, to answer with
	}
	env, err := jsonrpc.ReadEnvelope(line)
	if err != nil {
		return m, err
	}
	str := func(raw []byte, dst *string) bool {
		if raw == nil || string(raw) == "null" {
			return true
		}
		if v, ok := commonString(raw); ok {
			*dst = v
			return true
		}
		v, ok := rawjson.String(raw)
		*dst = v
		return ok
	}
	if !str(env.JSONRPC, &m.JSONRPC) || !str(env.Method, &m.Method) {
		return m, errors.New("jsonrpc and method must be strings")
	}
	m.ID, m.Params, m.Result, m.Error = env.ID, env.Params, env.Result, env.Error
	return m, nil
}

// commonString returns, without allocating it, a string that nearly every
// message carries (the version, a call's method) when raw is one of them
// as JSON; false for any other.
func commonString(raw []byte) (string, bool) {
	switch string(raw) { // compared in place: no conversion is made
	case `"2.0"`:
		return "2.0", true
	case `"tools/call"`:
		return "tools/call", true
	case `"notifications/cancelled"`:
		return "notifications/cancelled", true
	case `"notifications/progress"`:
		return "notifications/progress", true
	case `"ping"`:
		return "ping", true
	}
	return "", false
}

// handleLine handles one line of the client's as Handle does a message.
func (s *legacySession) handleLine(ctx context.Context, line []byte) {
	m, err := parseMessage(line)
	s.dispatch(ctx, m, err)
}

// Handle serves one message the transport read and decoded
// (parseMessage, whose error is err), under the session's context: a
// request starts (its answer goes to the output), an answer or a
// notification takes effect. One goroutine at a time calls it, in the
// order the client sent; flushBatch then sends what it gathered.
func (s *legacySession) Handle(m message, err error) { s.dispatch(s.rctx, m, err) }

// flushBatch sends the requests Handle gathered for upstreams, one
// write per upstream.
func (s *legacySession) flushBatch() { s.batch.Flush() }

func (s *legacySession) dispatch(ctx context.Context, m message, err error) {
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			s.out.error(json.RawMessage("null"), mcp.PARSE_ERROR, "parse error: "+err.Error(), nil)
		} else {
			s.out.error(json.RawMessage("null"), mcp.INVALID_REQUEST, "invalid request: a message must be a JSON object", nil)
		}
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	if hasID && !validID(m.ID) {
		// The id cannot be echoed: JSON-RPC allows only a string or a
		// number (or null), so the answer carries null.
		s.out.error(json.RawMessage("null"), mcp.INVALID_REQUEST, "invalid request: id must be a string or a number", nil)
		return
	}
	if m.Method != "" && (len(m.Result) > 0 || len(m.Error) > 0) {
		id := m.ID
		if !hasID {
			id = json.RawMessage("null")
		}
		s.out.error(id, mcp.INVALID_REQUEST, "invalid request: a message has a method or a result/error, not both", nil)
		return
	}
	if hasID && m.Method != "" && !s.initSeen.Load() && core.HasModernMeta(m.Params) {
		// A client that began with initialize speaks the legacy era
		// throughout: only one that did not is looked at for modern
		// _meta, which keeps the legacy hot path free of the scan.
		m.modern = true
	}
	switch {
	case m.modern:
		s.startRequest(ctx, m)
	case m.Method == "initialize" && hasID:
		s.initSeen.Store(true)
		s.startRequest(ctx, m)
	case m.Method != "" && hasID && m.Method != "ping" && !s.initSeen.Load():
		// Read in order, so a client that pipelines initialize and its
		// first requests is served; one that skips it is not.
		s.out.error(m.ID, mcp.INVALID_REQUEST, "invalid request: "+m.Method+" before initialize: the session must begin with initialize", nil)
	case m.Method != "" && hasID:
		s.startRequest(ctx, m)
	case m.Method != "":
		s.notification(ctx, m)
	case len(m.Result) > 0 || len(m.Error) > 0:
		s.clientResponse(m)
	case hasID:
		s.out.error(m.ID, mcp.INVALID_REQUEST, "invalid request: no method", nil)
	default:
		s.out.error(json.RawMessage("null"), mcp.INVALID_REQUEST, "invalid request: no method and no id", nil)
	}
}

// validID reports whether a request id is a JSON string or number.
func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func (s *legacySession) notification(ctx context.Context, m message) {
	switch m.Method {
	case string(mcp.MethodNotificationCancelled):
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.mu.Lock()
			r := s.inflight[string(p.RequestID)]
			s.mu.Unlock()
			if r != nil {
				r.cancel()
			}
		}
	case string(mcp.MethodNotificationInitialized):
		s.sess.ready.Store(true)
		// Servers already waiting for a login can now ask this client.
		s.a.offerLogins()
		if s.sess.clientCaps().Roots != nil {
			// Upstreams started before this client came, and any roots
			// they asked for were refused: have them ask again.
			s.a.rootsChanged()
		}
	case string(mcp.MethodNotificationRootsListChanged):
		s.a.rootsChanged()
	}
}

func (s *legacySession) startRequest(ctx context.Context, m message) {
	key := string(m.ID)
	r := &running{}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	if _, dup := s.inflight[key]; dup {
		s.mu.Unlock()
		s.out.error(m.ID, mcp.INVALID_REQUEST, "invalid request: id "+key+" is already in use by a request in flight", nil)
		return
	}
	s.inflight[key] = r
	s.wg.Add(1)
	s.answering.Add(1)
	s.mu.Unlock()
	sendCtx := s.sendCtx
	if s.a.tel != nil {
		ctx, sendCtx, r.span = s.startRequestSpan(ctx, m)
	}
	if m.modern {
		// Under the read loop's context, which never ends, and its
		// batch, as sendCall: a call the core sends from here (it sends
		// only from here) is answered from the upstream's reader, and
		// cancelled through the core.
		r.started(s.serveModern(sendCtx, m, func(result json.RawMessage, rpcErr *jsonrpc.Error, onReader bool) {
			s.answer(r, m, result, rpcErr, !onReader)
		}))
		return
	}
	if stop, ok := s.sendCall(sendCtx, m, func(result json.RawMessage, rpcErr *jsonrpc.Error) {
		s.answer(r, m, result, rpcErr, false)
	}); ok {
		r.started(stop) // answered from the upstream's reader: fastcall.go
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	r.started(func(error) { cancel() })
	go func() {
		defer cancel()
		result, rpcErr := s.handle(ctx, m)
		s.answer(r, m, result, rpcErr, true)
	}()
}

// answer ends a request: its id is freed and the answer written, unless
// the request was cancelled. Only a caller that may wait (wait) writes
// the answer itself when nothing is queued; an upstream's reader holds it
// for the outbox's next Flush.
func (s *legacySession) answer(r *running, m message, result json.RawMessage, rpcErr *jsonrpc.Error, wait bool) {
	defer s.wg.Done()
	defer s.answering.Done()
	// Free the id before answering: a client may reuse it as soon as
	// it has the answer.
	s.mu.Lock()
	delete(s.inflight, string(m.ID))
	s.mu.Unlock()
	if result == nil && rpcErr == nil && forwarded[m.Method] {
		// A source that answered nothing must not leave the client
		// waiting forever.
		rpcErr = &jsonrpc.Error{Code: mcp.INTERNAL_ERROR, Message: m.Method + ": the server returned no result"}
	}
	if s.a.tel != nil {
		s.endRequestSpan(r, m, result, rpcErr)
	}
	if r.isCancelled() || s.ended() {
		// Cancelled by the client (no answer is expected) or shutting
		// down (nobody is left to read it).
		return
	}
	switch {
	case rpcErr != nil:
		s.out.error(m.ID, rpcErr.Code, rpcErr.Message, rpcErr.Data)
	case result != nil && wait:
		s.out.result(m.ID, result)
	case result != nil:
		s.out.hold(m.ID, result) // flushed after: s.send's Flusher in sendCall
	}
}

// serveModern answers a modern request through the session core, without
// blocking the read loop; the notifications that belong to it go out
// ahead of its answer. It returns what cancels the request.
func (s *legacySession) serveModern(ctx context.Context, m message, answer func(json.RawMessage, *jsonrpc.Error, bool)) func(error) {
	fail := func(e *core.Error) { answer(nil, e, false) }
	srv, err := s.a.Modern()
	if err != nil {
		fail(&core.Error{Code: mcp.INTERNAL_ERROR, Message: err.Error()})
		return func(error) {}
	}
	req, e := core.Decode(m.ID, m.Method, m.Params)
	if e != nil {
		fail(e)
		return func(error) {}
	}
	req.Via = &s.send // the batch and flusher, for coreCatalog.Send
	return srv.Serve(ctx, req, s.out.notify, func(res json.RawMessage, e *core.Error, onReader bool) {
		if e != nil {
			answer(nil, e, onReader)
		} else {
			answer(res, nil, onReader)
		}
	})
}

// forwarded are the methods answered by a source's result.
var forwarded = map[string]bool{"tools/call": true, "resources/read": true, "prompts/get": true,
	"completion/complete": true, "resources/subscribe": true, "resources/unsubscribe": true}

// handle answers one request: the catalog methods here, the rest through
// mcp-go. A nil result and nil error means the answer was already written.
func (s *legacySession) handle(ctx context.Context, m message) (json.RawMessage, *jsonrpc.Error) {
	a := s.a
	switch m.Method {
	case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
		if a.exposeDirect() || m.Method != "tools/list" {
			// With expose proxy tools/list holds only the proxy tool and
			// the browser's tools, which need no upstream: answer at once.
			a.waitReady(ctx)
		}
		s.mu.Lock()
		s.listed[listKind[m.Method]] = true
		s.mu.Unlock()
		return s.list(m.Method), nil
	case "tools/call", "resources/read", "prompts/get", "completion/complete":
		return a.serveCall(ctx, s.l, m.Method, m.Params)
	case "logging/setLevel":
		res, err := a.setLogLevel(ctx, s.l, m.Params)
		return res, toRPCError(err, mcp.INVALID_PARAMS, a.opts.Redact)
	case "resources/subscribe", "resources/unsubscribe":
		a.waitReady(ctx)
		res, err := a.subscribe(ctx, s.l, m.Method, m.Params)
		return res, toRPCError(err, mcp.RESOURCE_NOT_FOUND, a.opts.Redact)
	case "server/discover":
		// mcpx relays a stateful session (notifications, and later
		// server-to-client requests), so it speaks the initialize handshake.
		return nil, &jsonrpc.Error{Code: mcp.METHOD_NOT_FOUND, Message: "method not found: server/discover"}
	}
	if m.JSONRPC != mcp.JSONRPC_VERSION {
		return nil, &jsonrpc.Error{Code: mcp.INVALID_REQUEST, Message: "Invalid JSON-RPC version"}
	}
	switch m.Method {
	case "initialize":
		return s.initialize(m.Params)
	case "ping":
		if !isObject(m.Params) {
			return nil, &jsonrpc.Error{Code: mcp.INVALID_REQUEST, Message: "unparsable ping request: params must be an object"}
		}
		return json.RawMessage(`{}`), nil
	}
	return nil, &jsonrpc.Error{Code: mcp.METHOD_NOT_FOUND, Message: "Method " + m.Method + " not found"}
}

var listKind = map[string]Kind{
	"tools/list":               KindTool,
	"resources/list":           KindResource,
	"resources/templates/list": KindResource,
	"prompts/list":             KindPrompt,
}

// list renders a list result for the client, shaped by the expose setting.
func (s *legacySession) list(method string) json.RawMessage { return s.a.ListResult(method) }

// ListResult is the result of a list method (tools/list, resources/list,
// resources/templates/list, prompts/list) as a client is served it now.
// Only tools are shaped by the expose setting: the proxy tool with expose
// proxy or both, upstream tools under their prefixed names with direct or
// both. Prompts and resources are listed under every setting: a client
// shows them in its pickers and they cost the model no context, so
// hiding them behind the proxy tool would save nothing.
func (a *Aggregator) ListResult(method string) json.RawMessage {
	c := a.Catalog()
	switch method {
	case "tools/list":
		tools := c.Tools
		if !a.exposeDirect() {
			tools = nil
			for _, e := range c.Tools {
				if e.direct {
					tools = append(tools, e)
				}
			}
		}
		if a.exposeProxy() {
			tools = append([]*Entry{a.proxyEntry}, tools...)
		}
		return listResult("tools", tools)
	case "resources/list":
		return listResult("resources", c.Resources)
	case "resources/templates/list":
		return listResult("resourceTemplates", c.ResourceTemplates)
	default:
		return listResult("prompts", c.Prompts)
	}
}

// exposeDirect reports whether upstream capabilities are served to the
// client under their prefixed names.
func (a *Aggregator) exposeDirect() bool {
	return a.cfg.Expose == config.ExposeDirect || a.cfg.Expose == config.ExposeBoth
}

// exposeProxy reports whether the client sees the proxy tool; it is the
// default.
func (a *Aggregator) exposeProxy() bool {
	return !a.exposeDirect() || a.cfg.Expose == config.ExposeBoth
}

// served reports whether the client was shown the upstream tool name:
// every one with expose direct or both, else only those listed in every
// mode (the browser's).
func (a *Aggregator) served(name string) bool {
	e, ok := a.Catalog().Tool(name)
	return ok && (a.exposeDirect() || e.direct)
}

func (a *Aggregator) waitReady(ctx context.Context) {
	if a.parent != nil {
		// A session's catalog is ready when the shared one is too.
		a.parent.waitReady(ctx)
	}
	select {
	case <-a.ready:
	case <-ctx.Done():
	}
}

func isRPCError(err error) bool {
	var rpc *upstream.RPCError
	return errors.As(err, &rpc)
}

// toRPCError maps an error to the JSON-RPC error the client gets: an
// upstream's own error passes through whole; any other failure (a transport
// error may quote a URL or header) goes through redact.
func toRPCError(err error, unknownCode int, redact func(string) string) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	var rpc *upstream.RPCError
	switch {
	case errors.As(err, &rpc):
		return &jsonrpc.Error{Code: rpc.Code, Message: rpc.Message, Data: rpc.Data}
	case isTimeout(err):
		return &jsonrpc.Error{Code: codeRequestTimeout, Message: redact(err.Error())}
	case errors.Is(err, ErrInvalidParams):
		return &jsonrpc.Error{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	case errors.Is(err, ErrUnknown):
		return &jsonrpc.Error{Code: unknownCode, Message: err.Error()}
	default:
		return &jsonrpc.Error{Code: mcp.INTERNAL_ERROR, Message: redact(err.Error())}
	}
}

// toolOutcome is the answer to a tools/call of tool name that its source
// answered with res or err.
func (a *Aggregator) toolOutcome(name string, res json.RawMessage, err error) (json.RawMessage, *jsonrpc.Error) {
	if errors.Is(err, ErrUnknown) {
		return a.unknownTool(name), nil // gone since served() said yes
	}
	if err != nil && !isRPCError(err) && !isTimeout(err) && !errors.Is(err, ErrInvalidParams) {
		// The tool exists but its server could not run it: tell the
		// model in a result it can read, as the spec asks.
		return toolError(a.opts.Redact(err.Error())), nil
	}
	return res, toRPCError(err, mcp.INVALID_PARAMS, a.opts.Redact)
}

// toolError is a CallToolResult reporting a failure as text.
func toolError(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
	})
	return b
}

// listChanged tells the client which lists changed: one notification per
// list, and only for a list the client has fetched since it was last told.
// Until then it holds nothing stale, and a burst of upstream changes (every
// server connecting at start) costs it one refetch, not one per change.
func (s *legacySession) listChanged(kinds []Kind) {
	if !s.sess.ready.Load() {
		return
	}
	for _, k := range kinds {
		s.mu.Lock()
		stale := s.listed[k]
		s.listed[k] = false
		s.mu.Unlock()
		if !stale {
			continue
		}
		method := map[Kind]mcp.MCPMethod{
			KindTool:     mcp.MethodNotificationToolsListChanged,
			KindResource: mcp.MethodNotificationResourcesListChanged,
			KindPrompt:   mcp.MethodNotificationPromptsListChanged,
		}[k]
		s.out.raw([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)))
	}
}

// progress relays an upstream's progress, already carrying the client's
// token, ahead of the response it belongs to. It runs on the upstream's
// reader, so it never waits (see outbox.notify).
func (s *legacySession) progress(params json.RawMessage) {
	msg := make([]byte, 0, len(params)+64)
	msg = append(msg, `{"jsonrpc":"2.0","method":"notifications/progress","params":`...)
	msg = append(msg, params...)
	msg = append(msg, '}')
	s.out.progress(params, msg)
}

// ended reports whether the session has ended.
func (s *legacySession) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// serveCall answers a request a source serves (tools/call, resources/read,
// prompts/get, completion/complete) for the served client l of either
// era (nil: none).
func (a *Aggregator) serveCall(ctx context.Context, l *listener, method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	switch method {
	case "tools/call":
		a.waitReady(ctx)
		name, err := paramString(params, "name")
		switch {
		case err != nil:
			return nil, toRPCError(err, mcp.INVALID_PARAMS, a.opts.Redact)
		case name == proxytool.Name && a.exposeProxy():
			// A server found waiting for a login while we waited is the
			// proxy's to explain, with its hint, as when found at once.
			path := proxyCallPath(params)
			if err := a.awaitTool(ctx, path); err != nil && a.loginHint(path) == "" {
				return toolError(a.opts.Redact(err.Error())), nil
			}
			a.refusedProxyCall(l, params)
			return a.proxyFor(l).Call(ctx, params), nil
		case !a.served(name) && a.exposeDirect():
			// A server that waits for a login says so at once: waiting for
			// it to connect would not help.
			if a.loginHint(name) != "" {
				return a.unknownTool(name), nil
			}
			if err := a.awaitTool(ctx, name); err != nil {
				return toolError(a.opts.Redact(err.Error())), nil
			}
		}
		if !a.served(name) {
			a.refused(l, method, params, a.Catalog().FilteredOut(KindTool, name))
			return a.unknownTool(name), nil // unknowntool.go
		}
		res, err := a.callTool(ctx, l, params)
		return a.toolOutcome(name, res, err)
	case "resources/read":
		a.waitReady(ctx)
		res, err := a.readResource(ctx, l, params)
		return res, toRPCError(err, mcp.RESOURCE_NOT_FOUND, a.opts.Redact)
	case "prompts/get":
		a.waitReady(ctx)
		res, err := a.getPrompt(ctx, l, params)
		return res, toRPCError(err, mcp.INVALID_PARAMS, a.opts.Redact)
	case "completion/complete":
		a.waitReady(ctx)
		res, err := a.complete(ctx, l, params)
		return res, toRPCError(err, mcp.INVALID_PARAMS, a.opts.Redact)
	}
	return nil, &jsonrpc.Error{Code: mcp.METHOD_NOT_FOUND, Message: "Method " + method + " not found"}
}
