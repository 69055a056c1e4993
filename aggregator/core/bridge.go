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

// call is an upstream call of a modern client's request.
type call struct {
	id                     string
	method, target, digest string
	cancel                 context.CancelFunc
	asks                   chan *ask    // the source's questions
	done                   chan outcome // its result, once
	mu                     sync.Mutex
	round                  int             // of the last input_required answered
	open                   map[string]*ask // questions sent to the client, by key
	seq                    int
	attached               func([]byte) // the notify of the client request waiting on it
	expiry                 *time.Timer
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

// bridged are the requests that may be answered input_required.
type target struct {
	name, uri      string
	args           json.RawMessage
	state          string
	hasState       bool
	responses      json.RawMessage
	statePresent   bool
	responsesFound bool
}

// readTarget finds, in one scan, what the bridge needs of params.
func readTarget(params json.RawMessage) (target, *Error) {
	var t target
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
			t.state, t.hasState = rawjson.String(v)
		case k.Is("inputResponses"):
			t.responsesFound = true
			t.responses = v
		}
		return true
	})
	if err != nil {
		return t, errorf(CodeInvalidParams, "invalid params: must be an object")
	}
	if t.statePresent && !t.hasState {
		return t, errorf(CodeInvalidParams, "invalid requestState: must be a string")
	}
	if t.responsesFound && (len(t.responses) == 0 || t.responses[0] != '{') {
		return t, errorf(CodeInvalidParams, "invalid inputResponses: must be an object of answers by key")
	}
	return t, nil
}

func (t target) key() string {
	if t.uri != "" {
		return t.uri
	}
	return t.name
}

// call answers tools/call, prompts/get or resources/read.
func (s *Server) call(ctx context.Context, req *Request, notify func([]byte)) (json.RawMessage, *Error) {
	t, perr := readTarget(req.Params)
	if perr != nil {
		return nil, perr
	}
	if !t.statePresent {
		c := s.start(ctx, req, t, req.Params)
		return s.wait(ctx, c, req, notify)
	}
	p, err := s.states.open(t.state, req.Method, t.key(), argumentsDigest(t.args))
	if err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: err.Error()}
	}
	if p.Upstream != "" || p.Call == "" {
		// The source's own state: pass it and the answers on, as a new
		// call (any replica can).
		params, _, err := rawjson.Replace(req.Params, "requestState", []byte(quote(p.Upstream)))
		if err != nil {
			return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
		}
		return s.wait(ctx, s.start(ctx, req, t, params), req, notify)
	}
	s.mu.Lock()
	c := s.calls[p.Call]
	s.mu.Unlock()
	if c == nil {
		return nil, errorf(CodeInvalidParams, "invalid requestState: the call it continues is no longer waiting here (it ended, expired, or runs in another mcpx: route retries to the replica that answered input_required)")
	}
	c.mu.Lock()
	if c.attached != nil || p.Round != c.round {
		c.mu.Unlock()
		return nil, errorf(CodeInvalidParams, "invalid requestState: already used (each input_required result's requestState is answered once)")
	}
	c.round++ // consumed: a replay is refused
	var answers map[string]json.RawMessage
	if t.responsesFound {
		if err := json.Unmarshal(t.responses, &answers); err != nil {
			c.round--
			c.mu.Unlock()
			return nil, errorf(CodeInvalidParams, "invalid inputResponses: %v", err)
		}
	}
	for key, a := range c.open {
		res, ok := answers[key]
		if !ok {
			continue // asked again below
		}
		if len(res) == 0 || res[0] != '{' {
			c.round--
			c.mu.Unlock()
			return nil, errorf(CodeInvalidParams, "invalid inputResponses: %q must be the result object of %s", key, a.method)
		}
		delete(c.open, key)
		a.reply <- reply{res: res}
	}
	c.mu.Unlock()
	return s.wait(ctx, c, req, notify)
}

// start sends the request to the catalog on a context of its own: the
// call outlives the client request that started it when it waits for a
// retry.
func (s *Server) start(ctx context.Context, req *Request, t target, params json.RawMessage) *call {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &call{method: req.Method, target: t.key(), digest: argumentsDigest(t.args), cancel: cancel,
		asks: make(chan *ask, 8), done: make(chan outcome, 1), open: map[string]*ask{}}
	peer := s.peer(req, func(b []byte) { c.forward(b) }, func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if err := allowed(req.Meta.Capabilities, method, params); err != nil {
			return nil, err
		}
		a := &ask{method: method, params: params, reply: make(chan reply, 1)}
		select {
		case c.asks <- a:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case r := <-a.reply:
			return r.res, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	go func() {
		res, err := s.cat.Call(cctx, req.Method, params, peer)
		c.done <- outcome{res, err}
	}()
	return c
}

// forward writes a notification of the source (progress, a log message)
// to the client request waiting on the call, if any.
func (c *call) forward(b []byte) {
	c.mu.Lock()
	f := c.attached
	c.mu.Unlock()
	if f != nil {
		f(b)
	}
}

// wait attaches a client request to c until c asks something (the
// request is answered input_required) or ends (its result).
func (s *Server) wait(ctx context.Context, c *call, req *Request, notify func([]byte)) (json.RawMessage, *Error) {
	c.mu.Lock()
	c.attached = notify
	if c.expiry != nil {
		c.expiry.Stop()
	}
	c.mu.Unlock()
	detach := func() {
		c.mu.Lock()
		c.attached = nil
		c.mu.Unlock()
	}
	// Questions still unanswered from the last round are asked again.
	c.mu.Lock()
	pending := len(c.open)
	c.mu.Unlock()
	var first *ask
	if pending == 0 {
		select {
		case o := <-c.done:
			detach()
			s.forget(c)
			return s.finish(c, o)
		case first = <-c.asks:
		case <-ctx.Done():
			// The client gave up on the request (cancelled it, or its
			// stream broke): the call goes with it.
			detach()
			s.forget(c)
			c.cancel()
			return nil, errorf(CodeInternalError, "request cancelled")
		}
	}
	asks := s.gather(first, c)
	detach()
	return s.inputRequired(c, asks), nil
}

// gather collects, with first, the other questions the source asks at the
// same time (within Gather), and the ones still open.
func (s *Server) gather(first *ask, c *call) []*ask {
	var asks []*ask
	if first != nil {
		asks = append(asks, first)
		t := time.NewTimer(s.o.Gather)
		defer t.Stop()
	more:
		for {
			select {
			case a := <-c.asks:
				asks = append(asks, a)
			case <-t.C:
				break more
			}
		}
	}
	return asks
}

// inputRequired registers c as waiting and renders the input_required
// result asking the client asks and every question still open.
func (s *Server) inputRequired(c *call, asks []*ask) json.RawMessage {
	c.mu.Lock()
	for _, a := range asks {
		c.seq++
		c.open["input-"+strconv.Itoa(c.seq)] = a
	}
	keys := make([]string, 0, len(c.open))
	for k := range c.open {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if c.id == "" {
		c.id = rand.Text()
	}
	round := c.round
	c.expiry = time.AfterFunc(s.o.StateTTL, func() {
		s.forget(c)
		c.cancel()
	})
	var b []byte
	b = append(b, `{"resultType":"input_required","inputRequests":{`...)
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
	c.mu.Unlock()
	s.mu.Lock()
	s.calls[c.id] = c
	s.mu.Unlock()
	state := s.states.mint(statePayload{Method: c.method, Target: c.target, Digest: c.digest, Call: c.id, Round: round})
	b = append(b, `},"requestState":`...)
	b = append(b, quote(state)...)
	b = append(b, ',')
	b = append(b, s.serverInfo...)
	return append(b, '}')
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

// finish is the answer of a call that ended: its result (input_required
// when the source, a dual-era one, asked in its result) or its error.
func (s *Server) finish(c *call, o outcome) (json.RawMessage, *Error) {
	c.cancel()
	if o.err != nil {
		return nil, asError(o.err)
	}
	inputs, _ := rawjson.Get(o.res, "inputRequests")
	if len(inputs) == 0 || string(inputs) == "null" {
		return s.complete(o.res, c.method == "resources/read"), nil
	}
	// The source asked in its result (it has the answers come back with
	// the retry, with its own requestState): pass it on, that state kept
	// inside one of ours.
	var up string
	if raw, _ := rawjson.Get(o.res, "requestState"); raw != nil {
		up, _ = rawjson.String(raw)
	}
	state := s.states.mint(statePayload{Method: c.method, Target: c.target, Digest: c.digest, Upstream: up})
	b := []byte(`{"resultType":"input_required","inputRequests":`)
	b = append(b, inputs...)
	b = append(b, `,"requestState":`...)
	b = append(b, quote(state)...)
	b = append(b, ',')
	b = append(b, s.serverInfo...)
	return append(b, '}'), nil
}

// allowed refuses a question the client did not declare it can answer:
// the source gets the error, as a legacy client would give it.
func allowed(caps Capabilities, method string, params json.RawMessage) error {
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
		return errorf(CodeMethodNotFound, "%s cannot be asked of a client of revision %s", method, Modern)
	}
	if need == "" {
		return nil
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{need: map[string]any{}}})
	return &Error{Code: CodeMissingClientCapability, Message: "the client did not declare the " + need + " capability", Data: data}
}
