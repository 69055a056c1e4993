package telemetry

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/rawjson"
)

// Outcome is how a request or call ended, the mcpx.outcome attribute.
type Outcome string

// Outcomes, as the audit trail names them.
const (
	OutcomeOK        Outcome = "ok"        // a result
	OutcomeIsError   Outcome = "isError"   // a tool's result with isError: true
	OutcomeError     Outcome = "error"     // a JSON-RPC error, or no answer
	OutcomeCancelled Outcome = "cancelled" // cancelled by the client, or the session ended
)

// ResultOutcome is the outcome of a result: isError for a tools/call
// result that says so (one scan of its top level), else ok.
func ResultOutcome(method string, res []byte) Outcome {
	if method == "tools/call" {
		if v, err := rawjson.Get(res, "isError"); err == nil && string(v) == "true" {
			return OutcomeIsError
		}
	}
	return OutcomeOK
}

// target reads, in one pass over params, what a method acts on and the
// params' _meta. The tool of tools/call and the prompt of prompts/get
// are low-cardinality: the span is named after them (spanName, "tools/call
// echo") and they are an attribute (attr). A resource's URI is an
// attribute only, never in a span name or a metric. Other methods' spans
// are named after the method alone.
func (t *Telemetry) target(method string, params []byte) (spanName string, attr attribute.KeyValue, meta []byte) {
	key := ""
	switch method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		key = "uri"
	}
	var raw []byte
	if err := rawjson.Scan(params, func(k rawjson.Key, v []byte) bool {
		switch {
		case key != "" && k.Is(key):
			raw = v
		case k.Is("_meta"):
			meta = v
		}
		return true
	}); err != nil {
		raw, meta = nil, nil
	}
	switch key {
	case "name":
		n := t.names.get(method, raw)
		if method == "tools/call" {
			return n.span, AttrTool.String(n.target), meta
		}
		return n.span, AttrPrompt.String(n.target), meta
	case "uri":
		uri, _ := rawjson.String(raw)
		return method, AttrResource.String(uri), meta
	}
	return method, attribute.KeyValue{}, meta
}

// Request is a client's request being answered. The zero Request records
// nothing.
type Request struct {
	t      *Telemetry
	span   trace.Span
	attrs  []attribute.KeyValue // the span's, set when it ends; nil when it records nothing
	start  time.Time
	method string
	target attribute.KeyValue
}

// StartRequest begins recording a client's request: a server span named
// after the method and its tool or prompt, child of the trace context the
// client sent in params._meta (a new trace without one), and the start
// of its duration. The returned ctx carries the span, for the upstream
// calls the request makes. session and id may be empty.
//
// The span's attributes are set when it ends, all at once, and only
// when it is sampled: a span not sampled costs its start and no more.
// The samplers mcpx configures (OTEL_TRACES_SAMPLER) do not read
// attributes.
func (t *Telemetry) StartRequest(ctx context.Context, method string, params []byte, session string, id []byte) (context.Context, Request) {
	if t == nil {
		return ctx, Request{}
	}
	name, attr, meta := t.target(method, params)
	r := Request{t: t, start: time.Now(), method: method, target: attr}
	if t.tracer == nil {
		return ctx, r
	}
	ctx = extractMeta(ctx, meta)
	ctx, r.span = t.tracer.Start(ctx, name, t.serverKind...)
	if !r.span.IsRecording() {
		return ctx, r
	}
	r.attrs = make([]attribute.KeyValue, 0, 4+maxEndAttrs)
	r.attrs = append(r.attrs, AttrMethod.String(method))
	if attr.Valid() {
		r.attrs = append(r.attrs, attr)
	}
	if session != "" {
		r.attrs = append(r.attrs, AttrSession.String(session))
	}
	if p := principal.Of(ctx); p != "" {
		r.attrs = append(r.attrs, AttrPrincipal.String(p))
	}
	if len(id) > 0 {
		r.attrs = append(r.attrs, AttrRequestID.String(requestID(id)))
	}
	return ctx, r
}

// requestID is a raw JSON-RPC id as text: a string's value, a number's
// digits.
func requestID(id []byte) string {
	if s, ok := rawjson.String(id); ok {
		return s
	}
	return string(id)
}

// End records how the request ended: its outcome, and for an error its
// JSON-RPC code and message.
func (r Request) End(o Outcome, code int, message string) {
	if r.t == nil {
		return
	}
	if r.span != nil {
		r.t.endSpan(r.span, r.attrs, o, code, message)
	}
	if r.t.metrics {
		k := setKey{method: r.method, outcome: o}
		if r.target.Key == AttrTool || r.target.Key == AttrPrompt {
			k.target = r.target
		}
		r.t.server.Record(context.Background(), time.Since(r.start).Seconds(), r.t.sets.get(k).record...)
	}
}

// maxEndAttrs is how many attributes end adds at most.
const maxEndAttrs = 3

// end sets a span's attributes, attrs and its outcome's, and its status,
// and ends it. attrs nil: the span records nothing.
func end(span trace.Span, attrs []attribute.KeyValue, o Outcome, code int, message string, opts ...trace.SpanEndOption) {
	if attrs == nil {
		span.End(opts...)
		return
	}
	attrs = append(attrs, AttrOutcome.String(string(o)))
	switch o {
	case OutcomeIsError:
		attrs = append(attrs, AttrErrorType.String("tool_error"))
		span.SetStatus(codes.Error, "the tool's result has isError")
	case OutcomeError:
		errType := "error"
		if code != 0 {
			errType = strconv.Itoa(code)
			attrs = append(attrs, AttrStatusCode.String(errType))
		}
		attrs = append(attrs, AttrErrorType.String(errType))
		span.SetStatus(codes.Error, message)
	case OutcomeCancelled:
		attrs = append(attrs, AttrErrorType.String("cancelled"))
	}
	span.SetAttributes(attrs...)
	span.End(opts...)
}

// endSpan is end, left to the batcher's goroutine when the provider is
// Setup's and the span records ([batcher.endLater]).
func (t *Telemetry) endSpan(span trace.Span, attrs []attribute.KeyValue, o Outcome, code int, message string) {
	if attrs != nil && t.later != nil && t.later.endLater(pendingEnd{span: span, attrs: attrs,
		outcome: o, code: code, message: message, at: time.Now()}) {
		return
	}
	end(span, attrs, o, code, message)
}

// Call is one request mcpx sends to an upstream server. The zero Call
// records nothing.
type Call struct {
	t     *Telemetry
	span  trace.Span
	attrs []attribute.KeyValue // as Request's
	start time.Time
	key   setKey          // server, method, tool or prompt
	n     *inflightSeries // the count of its calls in flight; nil without metrics
}

// StartCall begins recording a call to server: a client span, child of
// the client's request in ctx, and the call counted in flight. params are
// as sent to the server (its own name for the tool or prompt). The
// returned ctx carries the span; [Call.Inject] hands it on.
func (t *Telemetry) StartCall(ctx context.Context, server, method string, params []byte) (context.Context, Call) {
	if t == nil {
		return ctx, Call{}
	}
	name, attr, _ := t.target(method, params)
	c := Call{t: t, start: time.Now(), key: setKey{server: server, method: method}}
	if t.metrics {
		c.n = t.inflight.get(server, method)
		c.n.n.Add(1)
	}
	if attr.Key == AttrTool || attr.Key == AttrPrompt {
		c.key.target = attr
	}
	if t.tracer == nil {
		return ctx, c
	}
	ctx, c.span = t.tracer.Start(ctx, name, t.clientKind...)
	if c.span.IsRecording() {
		c.attrs = make([]attribute.KeyValue, 0, 3+maxEndAttrs)
		c.attrs = append(c.attrs, AttrServer.String(server), AttrMethod.String(method))
		if attr.Valid() {
			c.attrs = append(c.attrs, attr)
		}
	}
	return ctx, c
}

// Inject returns params with the call's trace context in
// params._meta.traceparent (and tracestate), for the server to continue;
// params unchanged when the call has no span or params are not an
// object.
func (c Call) Inject(params []byte) []byte {
	if c.span == nil {
		return params
	}
	return injectSpan(c.span.SpanContext(), params)
}

// Drop forgets a call that was never sent: it is no longer in flight, and
// its span is never exported.
func (c Call) Drop() {
	if c.n != nil {
		c.n.n.Add(-1)
	}
}

// End records the call's answer: res, or err with its JSON-RPC code (0
// when err is not a JSON-RPC error).
func (c Call) End(res []byte, err error, code int) {
	if c.t == nil {
		return
	}
	o := OutcomeOK
	msg := ""
	switch {
	case errors.Is(err, context.Canceled):
		o = OutcomeCancelled
	case err != nil:
		o, msg = OutcomeError, err.Error()
	default:
		o = ResultOutcome(c.key.method, res)
	}
	if c.span != nil {
		c.t.endSpan(c.span, c.attrs, o, code, msg)
	}
	if !c.t.metrics {
		return
	}
	c.n.n.Add(-1)
	ctx := context.Background()
	k := c.key
	k.outcome = o
	set := c.t.sets.get(k)
	c.t.calls.Add(ctx, 1, set.add...)
	c.t.client.Record(ctx, time.Since(c.start).Seconds(), set.record...)
}
