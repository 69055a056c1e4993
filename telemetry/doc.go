// Package telemetry is mcpx's OpenTelemetry: it sets up exporters from the
// standard OTEL_* environment ([Setup]) and records what mcpx measures
// ([Telemetry]): a span per client request, a child span per upstream
// call, and the call, state and restart metrics.
//
// Nothing here is global: [Setup] returns the providers, which the caller
// hands to [New] (the aggregator does, from its Options), and shuts down
// on exit, which flushes what is queued. With nothing configured Setup
// returns no providers and New a nil *Telemetry, whose methods do nothing
// at the cost of a nil check.
//
//	p, err := telemetry.Setup(ctx, &telemetry.Options{Version: version, Pull: true})
//	...
//	defer p.Shutdown(context.Background())
//	agg := aggregator.New(cfg, &aggregator.Options{TracerProvider: p.TracerProvider, MeterProvider: p.MeterProvider})
//	http.Handle("/metrics", p.MetricsHandler)
//
// Trace context travels in MCP's params._meta.traceparent (and
// tracestate), as OpenTelemetry's MCP semantic conventions ask:
// [ExtractMeta] continues a client's trace, [InjectMeta] hands the
// upstream call's span on.
package telemetry
