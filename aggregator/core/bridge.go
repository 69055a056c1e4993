package core

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// This file is the bridge between the eras for tools/call, prompts/get
// and resources/read: an upstream that asks the client something in the
// middle of a call (a legacy server's elicitation/create,
// sampling/createMessage or roots/list) gets its answer from a modern
// client's retry. The call goes on inside this process while the client
// is answered input_required with the questions and a requestState that
// names the call; the retry carrying that state and the inputResponses
// delivers the answers, and waits for the call's next question or its
// result. A call nobody comes back for is cancelled when its state
// expires.
//
// A call is a small state machine driven by three events: the source
// asks (asked), the source answers (ended), a client request waits on it
// (attach). No goroutine waits on a call: a source that takes a request
// without one (a Sender) answers a modern call as cheaply as a legacy one.

// Respond receives the answer to one request, exactly once. onReader
// says it is called on the source's reader, which must not block (a
// transport holds the answer for the reader's flush, see
// callopt.Flusher); otherwise it may write at once.
type Respond func(res json.RawMessage, e *Error, onReader bool)

// call is an upstream call of a modern client's request.
type call struct {
	s              *Server
	id             string // set when it first waits for a retry
	method, target string
	args           json.RawMessage // for the digest a state carries
	caps           Capabilities    // of the client, for what a source may ask it
	cancel         func(error)     // ends the source's call

	mu       sync.Mutex
	attached int             // counts the requests that waited on it
	round    int             // of the input_required last answered
	open     map[string]*ask // asked of the client, unanswered, by key
	fresh    []*ask          // asked by the source, not yet sent on
	seq      int
	ended    bool
	out      *outcome // the source's answer, while no request waits
	waiter   Respond  // the client request waiting on the call
	stop     func() bool
	notify   func([]byte)
	token    json.RawMessage // the waiting request's progressToken; nil: none
	route    string          // where the catalog sent the call (Peer.SetRoute)
	gather   *time.Timer
	expiry   *time.Timer
	finished bool
}

// ask is one question of the source to the client.
type ask struct {
	method string
	params json.RawMessage
	reply  chan reply
}

type reply struct {
	res json.RawMessage
	err error
}

type outcome struct {
	res json.RawMessage
	err error
}

// target is what the bridge reads of a request's params.
type target struct {
	name, uri      string
	args           json.RawMessage
	state          string
	statePresent   bool
	responses      json.RawMessage
	responsesFound bool
}

// readTarget finds, in one scan, what the bridge needs of params.
func readTarget(params json.RawMessage) (target, *Error) {
	var t target
	hasState := true
	err := rawjson.Scan(params, func(k rawjson.Key, v []byte) bool {
		switch {
		case k.Is("name"):
			t.name, _ = rawjson.String(v)
		case k.Is("uri"):
			t.uri, _ = rawjson.String(v)
		case k.Is("arguments"):
			t.args = v
		case k.Is("requestState"):
			t.statePresent = true
			t.state, hasState = rawjson.String(v)
		case k.Is("inputResponses"):
			t.responsesFound = true
			t.responses = v
		}
		return true
	})
	if err != nil {
		return t, jsonrpc.Errorf(CodeInvalidParams, "invalid params: must be an object")
	}
	if !hasState {
		return t, jsonrpc.Errorf(CodeInvalidParams, "invalid requestState: must be a string")
	}
	if t.responsesFound && (len(t.responses) == 0 || t.responses[0] != '{') {
		return t, jsonrpc.Errorf(CodeInvalidParams, "invalid inputResponses: must be an object of answers by key")
	}
	return t, nil
}

func (t target) key() string {
	if t.uri != "" {
		return t.uri
	}
	return t.name
}

// serveCall answers tools/call, prompts/get or resources/read through
// respond: a new call, the continuation of one waiting here, or a new
// call carrying a source's own requestState. It returns what cancels the
// request (see Serve).
func (s *Server) serveCall(ctx context.Context, req *Request, notify func([]byte), respond Respond) (cancel func(error)) {
	t, perr := readTarget(req.Params)
	if perr != nil {
		respond(nil, perr, false)
		return ignoreCancel
	}
	if !t.statePresent {
		if cancel, ok := s.sendDirect(ctx, req, t, notify, respond); ok {
			return cancel
		}
		return s.start(ctx, req, t, req.Params, "", notify, respond)
	}
	p, err := s.states.open(t.state, req.Method, t.key(), argumentsDigest(t.args))
	if err != nil {
		respond(nil, &Error{Code: CodeInvalidParams, Message: err.Error()}, false)
		return ignoreCancel
	}
	if p.Call == "" {
		// A passthrough state: the source's own state and the answers go
		// on, as a new call (any replica can), to the source that asked.
		// A source that gave no state is sent none.
		var params json.RawMessage
		if p.Upstream != "" {
			params, _, err = rawjson.Replace(req.Params, "requestState", []byte(quote(p.Upstream)))
		} else {
			params, _, err = rawjson.Filter(req.Params, func(k rawjson.Key) bool { return k.Is("requestState") })
		}
		if err != nil {
			respond(nil, jsonrpc.Errorf(CodeInvalidParams, "invalid params: %v", err), false)
			return ignoreCancel
		}
		return s.start(ctx, req, t, params, p.Route, notify, respond)
	}
	s.mu.Lock()
	c := s.calls[p.Call]
	s.mu.Unlock()
	if c == nil {
		respond(nil, jsonrpc.Errorf(CodeInvalidParams, "invalid requestState: the call it continues is no longer waiting here (it ended, expired, or runs in another mcpx: route a retry to the replica that answered input_required)"), false)
		return ignoreCancel
	}
	if e := c.deliver(p.Round, t, req.Meta.ProgressToken, notify); e != nil {
		respond(nil, e, false)
		return ignoreCancel
	}
	return c.attach(ctx, req.Meta.ProgressToken, notify, respond)
}

// ignoreCancel is the cancel of a request already answered.
func ignoreCancel(error) {}

// sendDirect sends a tools/call that nothing can be asked of the client
// during (it declared neither sampling, elicitation nor roots) straight
// to a Sender, and answers it from the source's reader: no call to keep,
// nothing that waits for a retry, so none of the bridge, as a legacy
// session's call (fastcall.go). ok is false, having done
// nothing, for any other call, which start serves.
func (s *Server) sendDirect(ctx context.Context, req *Request, t target, notify func([]byte), respond Respond) (cancel func(error), ok bool) {
	sender, ok := s.cat.(Sender)
	if !ok || req.Method != "tools/call" {
		return nil, false
	}
	peer := &req.direct
	*peer = Peer{Meta: req.Meta, method: req.Method, ask: refuse, notify: notify, Via: req.Via}
	if peer.CanAsk() {
		return nil, false
	}
	// Under ctx itself: nothing outlives the request, and a ctx that
	// ends cancels the source's call. The answer holds only what it
	// needs of t, for a smaller closure.
	key, args := t.key(), t.args
	return sender.Send(ctx, peer, req.Method, req.Params, func(res json.RawMessage, err error) {
		out, e := s.result(req.Method, key, args, res, err, req.Meta.Capabilities, "")
		respond(out, e, true)
	})
}

// refuse is the ask of a request whose client declared nothing it can be
// asked: Peer.Request refuses every question before it gets here.
func refuse(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, jsonrpc.Errorf(CodeInternalError, "no question can be asked of this client")
}

// start sends the request to the catalog: without a goroutine when the
// catalog is a Sender that takes it, else on one of its own. The call
// outlives the client request that started it when it waits for a retry.
// route is a passthrough state's (Peer.Route).
func (s *Server) start(ctx context.Context, req *Request, t target, params json.RawMessage, route string, notify func([]byte), respond Respond) (cancel func(error)) {
	c := &call{s: s, method: req.Method, target: t.key(), args: t.args, caps: req.Meta.Capabilities}
	peer := &Peer{Meta: req.Meta, method: req.Method, ask: c.asked, notify: c.forward, progress: c.progress,
		Route: route, SetRoute: c.setRoute, Via: req.Via}
	cancel = c.attach(ctx, req.Meta.ProgressToken, notify, respond)
	cctx := ctx
	if ctx.Done() != nil {
		cctx = context.WithoutCancel(ctx)
	}
	if sender, ok := s.cat.(Sender); ok && req.Method == "tools/call" {
		stop, sent := sender.Send(cctx, peer, req.Method, params, func(res json.RawMessage, err error) {
			c.end(outcome{res, err}, true)
		})
		if sent {
			c.setCancel(stop)
			return cancel
		}
	}
	cctx, stop := context.WithCancelCause(cctx)
	c.setCancel(stop)
	go func() {
		res, err := s.cat.Call(cctx, peer, req.Method, params)
		c.end(outcome{res, err}, false)
	}()
	return cancel
}

// setCancel records how to end the source's call; a call that already
// ended, or was given up, is ended at once.
func (c *call) setCancel(cancel func(error)) {
	c.mu.Lock()
	c.cancel = cancel
	gone := c.finished
	c.mu.Unlock()
	if gone {
		cancel(context.Canceled)
	}
}

// setRoute records where the catalog sent the call (Peer.SetRoute).
func (c *call) setRoute(route string) {
	c.mu.Lock()
	c.route = route
	c.mu.Unlock()
}

// progress is the source's progress params for the client request
// waiting on the call: under that request's progressToken, which on a
// retry is not the one the call was started with; nil when that request
// asked for no progress.
func (c *call) progress(params json.RawMessage) json.RawMessage {
	c.mu.Lock()
	token := c.token
	c.mu.Unlock()
	if token == nil {
		return nil
	}
	out, _, err := rawjson.Replace(params, "progressToken", token)
	if err != nil {
		return nil
	}
	return out
}

// forward writes a notification of the source (progress, a log message)
// to the client request waiting on the call, if any.
func (c *call) forward(b []byte) {
	c.mu.Lock()
	f := c.notify
	c.mu.Unlock()
	if f != nil {
		f(b)
	}
}

// attach has a client request wait on c: for its result, or its next
// questions (and any still unanswered), gathered for Gather. token is
// the request's progressToken: the call's progress goes out under it. It
// returns what gives up the call for as long as this request waits on it.
func (c *call) attach(ctx context.Context, token json.RawMessage, notify func([]byte), respond Respond) (cancel func(error)) {
	c.mu.Lock()
	if c.out != nil {
		o := *c.out
		c.mu.Unlock()
		res, e := c.s.finish(c, o)
		respond(res, e, false)
		return ignoreCancel
	}
	if c.expiry != nil {
		c.expiry.Stop()
	}
	c.waiter, c.notify, c.token = respond, notify, nilIfNull(token)
	c.attached++
	gen := c.attached
	if len(c.fresh)+len(c.open) > 0 && c.gather == nil {
		c.gather = time.AfterFunc(c.s.o.Gather, c.askClient)
	}
	// A client that gives up on the request (cancels it, or its stream
	// breaks) gives up the call.
	if ctx.Done() != nil {
		c.stop = context.AfterFunc(ctx, func() { c.abandon(gen) })
	}
	c.mu.Unlock()
	return func(error) { c.abandon(gen) }
}

// takeWaiter detaches the waiting request; c.mu held.
func (c *call) takeWaiter() Respond {
	w := c.waiter
	c.waiter, c.notify, c.token = nil, nil, nil
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	if c.gather != nil {
		c.gather.Stop()
		c.gather = nil
	}
	return w
}

// abandon ends the call when the request waiting on it, the gen-th, was
// cancelled; a request that no longer waits changes nothing.
func (c *call) abandon(gen int) {
	c.mu.Lock()
	if c.attached != gen || c.waiter == nil {
		c.mu.Unlock()
		return
	}
	w := c.takeWaiter()
	c.finished = true
	cancel := c.cancel
	c.mu.Unlock()
	c.s.forget(c)
	if cancel != nil {
		cancel(context.Canceled)
	}
	w(nil, jsonrpc.Errorf(CodeInternalError, "request cancelled"), false)
}

// asked is the source asking the client something: it waits for the
// answer a retry delivers, or for the call's end.
func (c *call) asked(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	a := &ask{method: method, params: params, reply: make(chan reply, 1)}
	c.mu.Lock()
	c.fresh = append(c.fresh, a)
	if c.waiter != nil && c.gather == nil {
		c.gather = time.AfterFunc(c.s.o.Gather, c.askClient)
	}
	c.mu.Unlock()
	select {
	case r := <-a.reply:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// askClient answers the waiting request input_required with the
// questions open: the call waits here for the retry.
func (c *call) askClient() {
	s := c.s
	c.mu.Lock()
	c.gather = nil
	if c.waiter == nil || c.finished {
		c.mu.Unlock()
		return
	}
	if c.open == nil {
		c.open = map[string]*ask{}
	}
	for _, a := range c.fresh {
		c.seq++
		c.open["input-"+strconv.Itoa(c.seq)] = a
	}
	c.fresh = nil
	keys := make([]string, 0, len(c.open))
	for k := range c.open {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if c.id == "" {
		c.id = rand.Text()
	}
	b := []byte(`{"resultType":"input_required","inputRequests":{`)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		a := c.open[k]
		b = fmt.Appendf(b, `%s:{"method":%s`, quote(k), quote(a.method))
		if len(a.params) > 0 {
			b = append(append(b, `,"params":`...), a.params...)
		}
		b = append(b, '}')
	}
	state := s.states.mint(statePayload{Method: c.method, Target: c.target, Digest: argumentsDigest(c.args), Call: c.id, Round: c.round})
	c.expiry = time.AfterFunc(s.o.StateTTL, c.expire)
	w := c.takeWaiter()
	c.mu.Unlock()
	s.mu.Lock()
	s.calls[c.id] = c
	s.mu.Unlock()
	b = append(b, `},"requestState":`...)
	b = append(b, quote(state)...)
	b = append(b, ',')
	b = append(b, s.serverInfo...)
	w(append(b, '}'), nil, false)
}

// expire ends a call no retry came back for.
func (c *call) expire() {
	c.mu.Lock()
	if c.waiter != nil {
		c.mu.Unlock()
		return
	}
	c.finished = true
	cancel := c.cancel
	c.mu.Unlock()
	c.s.forget(c)
	if cancel != nil {
		cancel(context.Canceled)
	}
}

// deliver hands the answers of a retry to the questions they answer. The
// state's round must be the call's: each input_required is answered
// once, and a replay is refused. What the source sends once answered
// goes to the retry (notify, under its progressToken), even before the
// retry attaches.
func (c *call) deliver(round int, t target, token json.RawMessage, notify func([]byte)) *Error {
	var answers map[string]json.RawMessage
	if t.responsesFound {
		if err := json.Unmarshal(t.responses, &answers); err != nil {
			return jsonrpc.Errorf(CodeInvalidParams, "invalid inputResponses: %v", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiter != nil || round != c.round || c.finished {
		return jsonrpc.Errorf(CodeInvalidParams, "invalid requestState: already used (each input_required result's requestState is answered once)")
	}
	for key, a := range c.open {
		if res, ok := answers[key]; ok && (len(res) == 0 || res[0] != '{') {
			return jsonrpc.Errorf(CodeInvalidParams, "invalid inputResponses: %q must be the result object of %s", key, a.method)
		}
	}
	c.round++
	c.notify, c.token = notify, nilIfNull(token)
	for key, a := range c.open {
		if res, ok := answers[key]; ok {
			delete(c.open, key)
			a.reply <- reply{res: res}
		}
	}
	return nil
}

// end is the source's answer.
func (c *call) end(o outcome, onReader bool) {
	c.mu.Lock()
	w := c.takeWaiter()
	if w == nil {
		c.out = &o // for the retry
		c.mu.Unlock()
		return
	}
	c.finished = true
	c.mu.Unlock()
	res, e := c.s.finish(c, o)
	w(res, e, onReader)
}

// nilIfNull is a progressToken, nil when the request carries none.
func nilIfNull(token json.RawMessage) json.RawMessage {
	if len(token) == 0 || string(token) == "null" {
		return nil
	}
	return token
}

// forget drops c from the calls waiting for a retry.
func (s *Server) forget(c *call) {
	if c.id == "" {
		return
	}
	s.mu.Lock()
	if s.calls[c.id] == c {
		delete(s.calls, c.id)
	}
	s.mu.Unlock()
}

// finish is the answer of a call that ended (see result).
func (s *Server) finish(c *call, o outcome) (json.RawMessage, *Error) {
	s.forget(c)
	c.mu.Lock()
	for _, a := range c.open { // nobody will answer them now
		a.reply <- reply{err: jsonrpc.Errorf(CodeInternalError, "the call ended")}
	}
	c.open, c.finished = nil, true
	route := c.route
	c.mu.Unlock()
	return s.result(c.method, c.target, c.args, o.res, o.err, c.caps, route)
}

// allowedAll refuses the questions of an input_required result (its
// inputRequests) when the client did not declare it can answer one.
func allowedAll(caps Capabilities, inputs json.RawMessage) *Error {
	var questions map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(inputs, &questions); err != nil {
		return jsonrpc.Errorf(CodeInternalError, "the server's inputRequests are unreadable: %v", err)
	}
	for _, q := range questions {
		if err := Allowed(caps, q.Method, q.Params); err != nil {
			return asError(err)
		}
	}
	return nil
}

// Allowed refuses, with MissingClientCapability, a question a client
// with caps did not declare it can answer, and with method-not-found one
// no modern client is asked: the source gets the error, as a legacy
// client would give it.
func Allowed(caps Capabilities, method string, params json.RawMessage) error {
	var need string
	switch method {
	case "sampling/createMessage":
		if !caps.Sampling {
			need = "sampling"
		}
	case "elicitation/create":
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		if !caps.Elicitation || p.Mode == "url" && !caps.ElicitationURL {
			need = "elicitation"
		}
	case "roots/list":
		if !caps.Roots {
			need = "roots"
		}
	default:
		return jsonrpc.Errorf(CodeMethodNotFound, "%s cannot be asked of a client of revision %s", method, Modern)
	}
	if need == "" {
		return nil
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{need: map[string]any{}}})
	return &Error{Code: CodeMissingClientCapability, Message: "the client did not declare the " + need + " capability", Data: data}
}
