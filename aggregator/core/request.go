package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// This file is how a legacy session answers one request: started from
// the read loop (startRequest), answered from an upstream's reader
// (sendCall) or a goroutine of its own (handle), and written (answer).

func (s *Session) startRequest(ctx context.Context, m Message) {
	key := string(m.ID)
	r := &running{}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	if _, dup := s.inflight[key]; dup {
		s.mu.Unlock()
		s.out.error(m.ID, CodeInvalidRequest, "invalid request: id "+key+" is already in use by a request in flight", nil)
		return
	}
	s.inflight[key] = r
	if !m.modern {
		r.token = s.track(m)
	}
	s.wg.Add(1)
	s.answering.Add(1)
	s.mu.Unlock()
	sendCtx := s.sendCtx
	if s.tel != nil {
		ctx, sendCtx, r.span = s.startRequestSpan(ctx, m)
	}
	if m.modern {
		// Under the read loop's context, which never ends, and with its
		// batch, as sendCall: a call the core sends from here (it sends
		// only from here) is answered from the upstream's reader, and
		// cancelled through the core.
		r.started(s.serveModern(sendCtx, m, func(result json.RawMessage, rpcErr *jsonrpc.Error, onReader bool) {
			s.answer(r, m, result, rpcErr, !onReader)
		}))
		return
	}
	if stop, ok := s.sendCall(sendCtx, m, func(result json.RawMessage, err error) {
		var rpcErr *jsonrpc.Error
		if err != nil {
			rpcErr = asError(err)
		}
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
func (s *Session) answer(r *running, m Message, result json.RawMessage, rpcErr *jsonrpc.Error, wait bool) {
	defer s.wg.Done()
	defer s.answering.Done()
	// Free the id before answering: a client may reuse it as soon as
	// it has the answer.
	s.mu.Lock()
	delete(s.inflight, string(m.ID))
	if r.token != "" {
		delete(s.tokens, r.token)
	}
	s.mu.Unlock()
	if result == nil && rpcErr == nil && forwarded[m.Method] {
		// A source that answered nothing must not leave the client
		// waiting forever.
		rpcErr = &jsonrpc.Error{Code: CodeInternalError, Message: m.Method + ": the server returned no result"}
	}
	if s.tel != nil {
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
		s.out.hold(m.ID, result) // flushed after: s.send's Flusher, in sendCall
	}
}

// serveModern answers a modern request through the session core, without
// blocking the read loop; the notifications that belong to it go out
// ahead of its answer. It returns what cancels the request.
func (s *Session) serveModern(ctx context.Context, m Message, answer func(json.RawMessage, *jsonrpc.Error, bool)) func(error) {
	fail := func(e *Error) { answer(nil, e, false) }
	srv, err := s.cat.Modern()
	if err != nil {
		fail(&Error{Code: CodeInternalError, Message: err.Error()})
		return func(error) {}
	}
	req, e := Decode(m.ID, m.Method, m.Params)
	if e != nil {
		fail(e)
		return func(error) {}
	}
	req.Via = &s.send // the batch and the flusher, for a call sent from here
	return srv.Serve(ctx, req, s.out.notify, func(res json.RawMessage, e *Error, onReader bool) {
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

// handle answers one request: the catalog's methods through the
// catalog, the session's here. A nil result and nil error means the
// answer was already written.
func (s *Session) handle(ctx context.Context, m Message) (json.RawMessage, *jsonrpc.Error) {
	switch m.Method {
	case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
		s.cat.Ready(ctx, m.Method)
		// Marked before the list is taken: a change after it is told.
		s.mu.Lock()
		s.listed[listOf[m.Method]] = true
		s.mu.Unlock()
		res, err := s.cat.List(ctx, m.Method)
		if err != nil {
			return nil, asError(err)
		}
		return res, nil
	case "tools/call", "resources/read", "prompts/get", "completion/complete",
		"logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		res, err := s.cat.Call(ctx, s.client, m.Method, m.Params)
		if err != nil {
			return nil, asError(err)
		}
		return res, nil
	case "server/discover":
		// mcpx relays a stateful session (notifications, and later
		// server-to-client requests), so it speaks the initialize handshake.
		return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "method not found: server/discover"}
	}
	if m.JSONRPC != mcp.JSONRPC_VERSION {
		return nil, &jsonrpc.Error{Code: CodeInvalidRequest, Message: "Invalid JSON-RPC version"}
	}
	switch m.Method {
	case "initialize":
		return s.initialize(m.Params)
	case "ping":
		if !isObject(m.Params) {
			return nil, &jsonrpc.Error{Code: CodeInvalidRequest, Message: "unparsable ping request: params must be an object"}
		}
		return json.RawMessage(`{}`), nil
	}
	return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "Method " + m.Method + " not found"}
}

// listOf is the list each list method fetches.
var listOf = map[string]List{
	"tools/list":               ListTools,
	"resources/list":           ListResources,
	"resources/templates/list": ListResources,
	"prompts/list":             ListPrompts,
}

// listChangedMethod is the notification that each list changed.
var listChangedMethod = [numLists]mcp.MCPMethod{
	ListTools:     mcp.MethodNotificationToolsListChanged,
	ListResources: mcp.MethodNotificationResourcesListChanged,
	ListPrompts:   mcp.MethodNotificationPromptsListChanged,
}

// listChanged tells the client which lists changed: one notification per
// list, and only for a list the client has fetched since it was last told.
// Until then it holds nothing stale, and a burst of upstream changes (every
// server connecting at start) costs it one refetch, not one per change.
func (s *Session) listChanged(kinds []List) {
	if !s.hs.ready.Load() {
		return
	}
	for _, k := range kinds {
		if k >= numLists {
			continue
		}
		s.mu.Lock()
		stale := s.listed[k]
		s.listed[k] = false
		s.mu.Unlock()
		if !stale {
			continue
		}
		method := listChangedMethod[k]
		s.out.raw([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)))
	}
}

// progress relays an upstream's progress on the request whose id is of,
// already carrying the client's token, ahead of the response it belongs
// to. It runs on the upstream's reader, so it never waits (see
// outbox.notify).
// track records the progressToken of a request that has one, so that
// the progress the sources send for it reaches the stream of that
// request (progressOf); it returns the token as the key it is kept by,
// "" for none. One scan of the bytes tells most requests, which ask for
// no progress. s.mu is held.
func (s *Session) track(m Message) string {
	if !bytes.Contains(m.Params, []byte(`"progressToken"`)) {
		return ""
	}
	meta, err := rawjson.Get(m.Params, "_meta")
	if err != nil || len(meta) == 0 || meta[0] != '{' {
		return ""
	}
	token, err := rawjson.Get(meta, "progressToken")
	if err != nil || len(token) == 0 || string(token) == "null" {
		return ""
	}
	if s.tokens == nil {
		s.tokens = map[string]json.RawMessage{}
	}
	key := string(token)
	if _, dup := s.tokens[key]; dup {
		return "" // not unique, as the protocol requires: the first keeps it
	}
	s.tokens[key] = m.ID
	return key
}

// progressOf relays a source's notifications/progress to the client, on
// the stream of the request whose token it carries; nil Of (the session's
// own stream, over HTTP) for a token no request in flight declared.
func (s *Session) progressOf(params json.RawMessage) {
	var of json.RawMessage
	if token, err := rawjson.Get(params, "progressToken"); err == nil {
		s.mu.Lock()
		of = s.tokens[string(token)]
		s.mu.Unlock()
	}
	s.progress(of, params)
}

func (s *Session) progress(of, params json.RawMessage) {
	msg := make([]byte, 0, len(params)+64)
	msg = append(msg, `{"jsonrpc":"2.0","method":"notifications/progress","params":`...)
	msg = append(msg, params...)
	msg = append(msg, '}')
	s.out.progress(of, msg)
}

// ended reports whether the session has ended.
func (s *Session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}
