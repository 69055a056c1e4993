package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"

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
	if err != nil {
		return ctx
	}
	return extractMeta(ctx, meta)
}

// extractMeta is ExtractMeta given the params' _meta.
func extractMeta(ctx context.Context, meta []byte) context.Context {
	if len(meta) == 0 || meta[0] != '{' {
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

// injectSpan returns params with sc in params._meta, as the W3C trace
// context propagator writes it. Without a _meta in params, the common
// case, it writes the member in one copy of params rather than through
// SetMeta's two edits: this is on every traced call's path.
func injectSpan(sc trace.SpanContext, params []byte) []byte {
	if !sc.IsValid() {
		return params
	}
	ts := sc.TraceState().String()
	if open, ok := withoutMeta(params); ok {
		out := make([]byte, 0, len(params)+len(ts)+96)
		out = append(out, params[:open]...)
		out = append(out, `"_meta":{"traceparent":"`...)
		out = appendTraceparent(out, sc)
		out = append(out, '"')
		if ts != "" {
			out = append(out, `,"tracestate":`...)
			out = rawjson.AppendString(out, ts)
		}
		out = append(out, '}')
		if rest := bytes.TrimLeft(params[open:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, params[open:]...)
	}
	return SetMeta(params, string(appendTraceparent(nil, sc)), ts)
}

// withoutMeta reports whether params are an object without a _meta
// member, and where its members start.
func withoutMeta(params []byte) (open int, ok bool) {
	meta, err := rawjson.Get(params, "_meta")
	if err != nil || meta != nil {
		return 0, false
	}
	open = bytes.IndexByte(params, '{')
	return open + 1, open >= 0
}

// appendTraceparent appends sc as a W3C traceparent: version 00, trace
// id, span id, and the sampled flag, in lower-case hex.
func appendTraceparent(b []byte, sc trace.SpanContext) []byte {
	tid, sid := sc.TraceID(), sc.SpanID()
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, tid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, sid[:])
	b = append(b, '-')
	return hex.AppendEncode(b, []byte{byte(sc.TraceFlags() & trace.FlagsSampled)})
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
