package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of mcpx's spans and metrics.
const Scope = "github.com/mcpx/mcpx"

// Attribute keys. The mcp.*, gen_ai.*, jsonrpc.*, rpc.* and error.type
// keys are OpenTelemetry's MCP semantic conventions (development status);
// mcpx.* are mcpx's own.
const (
	AttrMethod     = attribute.Key("mcp.method.name")
	AttrSession    = attribute.Key("mcp.session.id")
	AttrResource   = attribute.Key("mcp.resource.uri")
	AttrTool       = attribute.Key("gen_ai.tool.name")
	AttrPrompt     = attribute.Key("gen_ai.prompt.name")
	AttrRequestID  = attribute.Key("jsonrpc.request.id")
	AttrStatusCode = attribute.Key("rpc.response.status_code")
	AttrErrorType  = attribute.Key("error.type")
	// AttrServer names the upstream server (its name in the config).
	AttrServer = attribute.Key("mcpx.server")
	// AttrOutcome is how a call ended: see [Outcome].
	AttrOutcome = attribute.Key("mcpx.outcome")
	// AttrTokens says what MetricProxyTokens counts: TokensListed or
	// TokensServed.
	AttrTokens = attribute.Key("mcpx.tokens")
	// AttrState is an upstream's state (upstream.State: ready, failed, ...).
	AttrState = attribute.Key("mcpx.state")
	// AttrPrincipal is the API key a client of serve --http came with.
	AttrPrincipal = attribute.Key("mcpx.principal")
)

// Metric names, as OTLP carries them; Prometheus shows dots as
// underscores, with _total on counters and the unit on histograms
// (mcpx_calls_total, mcp_client_operation_duration_seconds).
const (
	MetricCalls            = "mcpx.calls"
	MetricInflight         = "mcpx.calls.inflight"
	MetricClientDuration   = "mcp.client.operation.duration"
	MetricServerDuration   = "mcp.server.operation.duration"
	MetricUpstreams        = "mcpx.upstreams"
	MetricUpstreamRestarts = "mcpx.upstream.restarts"
	MetricWithheld         = "mcpx.tools.withheld"
	MetricProxyTokens      = "mcpx.proxy.tokens"
)

// The kinds of MetricProxyTokens (its AttrTokens): what the tool
// listings clients read through the proxy would have cost listed in
// full, and what they cost.
const (
	TokensListed = "listed"
	TokensServed = "served"
)

// durationBuckets are the semantic conventions' boundaries for MCP
// operation durations, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Gauges are read at each collection of the metrics; each may be nil
// (nothing to report). They are called from the metrics reader's
// goroutine, so they must be safe for concurrent use.
type Gauges struct {
	// States counts the upstreams in each state.
	States func() map[string]int
	// Restarts is, per upstream, how many times it was started again
	// after it was lost; it only grows while the upstream lives.
	Restarts func() map[string]int
	// Withheld counts, per upstream, the tools withheld from clients
	// until the user approves them (pinning).
	Withheld func() map[string]int
}

// Telemetry records mcpx's spans and metrics. A nil *Telemetry records
// nothing, and all its methods may be called on it. Its methods are safe
// for concurrent use.
type Telemetry struct {
	tracer trace.Tracer // nil: no spans
	names  names        // the spans' names
	// The span kinds, as options made once, ready to pass with ...:
	// making them, and their slice, costs allocations per span.
	serverKind, clientKind []trace.SpanStartOption
	later                  spanEnder // ends spans off the call's path; nil: End does

	metrics  bool // the instruments below are set
	calls    metric.Int64Counter
	inflight inflight                // read by the gauges' callback
	client   metric.Float64Histogram // upstream calls
	server   metric.Float64Histogram // client requests
	tokens   metric.Int64Counter     // MetricProxyTokens
	listed   metric.AddOption        // its two series
	served   metric.AddOption
	reg      metric.Registration // the gauges' callback; nil without
	sets     sets                // the metrics' attribute sets
}

// spanEnder ends spans later, off the path of the call they belong to:
// Setup's provider does, with its batcher.
type spanEnder interface {
	endLater(pendingEnd) bool
}

// New returns the recorder over the given providers; either may be nil
// (that signal is off). Both nil gives a nil *Telemetry.
func New(tp trace.TracerProvider, mp metric.MeterProvider, g Gauges) (*Telemetry, error) {
	if tp == nil && mp == nil {
		return nil, nil
	}
	t := &Telemetry{}
	if tp != nil {
		t.tracer = tp.Tracer(Scope)
		t.serverKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
		t.clientKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
		t.later, _ = tp.(spanEnder)
	}
	if mp == nil {
		return t, nil
	}
	m := mp.Meter(Scope)
	var errs [8]error
	t.calls, errs[0] = m.Int64Counter(MetricCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Calls sent to upstream servers, by server, method, tool or prompt, and outcome."))
	inflight, err1 := m.Int64ObservableUpDownCounter(MetricInflight, metric.WithUnit("{call}"),
		metric.WithDescription("Calls sent to upstream servers and not yet answered."))
	t.client, errs[2] = m.Float64Histogram(MetricClientDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of calls to upstream servers, from sending to the answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	t.server, errs[3] = m.Float64Histogram(MetricServerDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of client requests, from reading to answering."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	states, err4 := m.Int64ObservableGauge(MetricUpstreams, metric.WithUnit("{server}"),
		metric.WithDescription("Upstream servers in each state."))
	restarts, err5 := m.Int64ObservableCounter(MetricUpstreamRestarts, metric.WithUnit("{restart}"),
		metric.WithDescription("Times an upstream server was started again after it was lost."))
	withheld, err6 := m.Int64ObservableGauge(MetricWithheld, metric.WithUnit("{tool}"),
		metric.WithDescription("Tools withheld from clients until the user approves them, by server."))
	t.tokens, errs[7] = m.Int64Counter(MetricProxyTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens (bytes/4) of the tool listings clients got with expose proxy, and of the proxy's answers (served), against what listing every tool would have cost (listed): listed - served is what the proxy saved."))
	t.listed = metric.WithAttributes(AttrTokens.String(TokensListed))
	t.served = metric.WithAttributes(AttrTokens.String(TokensServed))
	errs[1], errs[4], errs[5], errs[6] = err1, err4, err5, err6
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("telemetry: instruments: %w", err)
	}
	t.metrics = true
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		observe(o, states, AttrState, g.States)
		observe(o, restarts, AttrServer, g.Restarts)
		observe(o, withheld, AttrServer, g.Withheld)
		t.inflight.observe(o, inflight)
		return nil
	}, states, restarts, withheld, inflight)
	if err != nil {
		return nil, fmt.Errorf("telemetry: gauges: %w", err)
	}
	t.reg = reg
	return t, nil
}

// observe reports each count of read under key.
func observe(o metric.Observer, inst metric.Int64Observable, key attribute.Key, read func() map[string]int) {
	if read == nil {
		return
	}
	for k, n := range read() {
		o.ObserveInt64(inst, int64(n), metric.WithAttributes(key.String(k)))
	}
}

// Close stops reading the gauges; the providers are their owner's to
// shut down.
func (t *Telemetry) Close() {
	if t != nil && t.reg != nil {
		t.reg.Unregister()
	}
}

// ProxyTokens counts a listing or an answer a client got through the
// proxy: what it cost (served) and what the client would have read
// instead (listed; 0 for a proxy answer, which only costs).
func (t *Telemetry) ProxyTokens(ctx context.Context, listed, served int64) {
	if t == nil || !t.metrics {
		return
	}
	if listed > 0 {
		t.tokens.Add(ctx, listed, t.listed)
	}
	if served > 0 {
		t.tokens.Add(ctx, served, t.served)
	}
}

// Tracing reports whether spans are recorded.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }
