package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx/mcpx/rawjson"
)

// W3C trace context keys, in params._meta as in HTTP headers.
const (
	keyTraceparent = "traceparent"
	keyTracestate  = "tracestate"
)

// carrier holds one trace context's two fields for the W3C propagator,
// without the map a propagation.MapCarrier allocates.
type carrier struct{ traceparent, tracestate string }

func (c *carrier) Get(key string) string {
	switch key {
	case keyTraceparent:
		return c.traceparent
	case keyTracestate:
		return c.tracestate
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case keyTraceparent:
		c.traceparent = value
	case keyTracestate:
		c.tracestate = value
	}
}

func (c *carrier) Keys() []string { return []string{keyTraceparent, keyTracestate} }

// ExtractMeta returns ctx with the remote trace context of MCP request
// params (params._meta.traceparent and tracestate), or ctx itself when
// there is none or it is malformed.
func ExtractMeta(ctx context.Context, params []byte) context.Context {
	meta, err := rawjson.Get(params, "_meta")
	if err != nil || len(meta) == 0 || meta[0] != '{' {
		return ctx
	}
	var c carrier
	if err := rawjson.Scan(meta, func(key rawjson.Key, v []byte) bool {
		switch {
		case key.Is(keyTraceparent):
			c.traceparent, _ = rawjson.String(v)
		case key.Is(keyTracestate):
			c.tracestate, _ = rawjson.String(v)
		}
		return true
	}); err != nil || c.traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, &c)
}

// injectSpan returns params with sc in params._meta.
func injectSpan(sc trace.SpanContext, params []byte) []byte {
	var c carrier
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), &c)
	if c.traceparent == "" {
		return params
	}
	return SetMeta(params, c.traceparent, c.tracestate)
}

// SetMeta returns params with traceparent (and tracestate, when not
// empty) set in params._meta, every other byte as it was; params
// unchanged when they, or their _meta, are not an object. Empty or null
// params are taken as {}.
func SetMeta(params []byte, traceparent, tracestate string) []byte {
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	meta, err := rawjson.Get(params, "_meta")
	if err != nil {
		return params
	}
	if len(meta) == 0 || string(meta) == "null" {
		meta = []byte("{}")
	}
	if meta[0] != '{' {
		return params
	}
	meta, err = rawjson.Set(meta, keyTraceparent, rawjson.AppendString(nil, traceparent))
	if err == nil && tracestate != "" {
		meta, err = rawjson.Set(meta, keyTracestate, rawjson.AppendString(nil, tracestate))
	}
	if err != nil {
		return params
	}
	out, err := rawjson.Set(params, "_meta", meta)
	if err != nil {
		return params
	}
	return out
}

// HasMeta reports whether params carry a traceparent in params._meta.
func HasMeta(params []byte) bool {
	meta, err := rawjson.Get(params, "_meta")
	if err != nil || len(meta) == 0 || meta[0] != '{' {
		return false
	}
	tp, err := rawjson.Get(meta, keyTraceparent)
	return err == nil && tp != nil
}
