package otlp

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Span flags beyond the W3C trace flags (OTLP's SpanFlags).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// Traces appends to b an ExportTraceServiceRequest holding spans, grouped
// by resource, then by instrumentation scope, each group in the order its
// first span came.
func Traces(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	type group struct {
		res   *resource.Resource
		scope []instrumentation.Scope
		spans [][]sdktrace.ReadOnlySpan
	}
	var groups []*group
	byRes := map[attribute.Distinct]*group{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		key := s.Resource().Equivalent()
		g := byRes[key]
		if g == nil {
			g = &group{res: s.Resource()}
			byRes[key] = g
			groups = append(groups, g)
		}
		sc := s.InstrumentationScope()
		i := 0
		for i < len(g.scope) && !sameScope(g.scope[i], sc) {
			i++
		}
		if i == len(g.scope) {
			g.scope = append(g.scope, sc)
			g.spans = append(g.spans, nil)
		}
		g.spans[i] = append(g.spans[i], s)
	}
	e := &enc{b: b}
	for _, g := range groups {
		e.begin(1) // resource_spans
		e.resource(1, g.res)
		for i, sc := range g.scope {
			e.begin(2) // scope_spans
			e.scope(1, sc)
			for _, s := range g.spans[i] {
				e.span(2, s)
			}
			e.string(3, sc.SchemaURL)
			e.end()
		}
		e.string(3, g.res.SchemaURL())
		e.end()
	}
	return e.b
}

func sameScope(a, b instrumentation.Scope) bool {
	return a.Name == b.Name && a.Version == b.Version && a.SchemaURL == b.SchemaURL &&
		a.Attributes.Equivalent() == b.Attributes.Equivalent()
}

// span writes a Span as field.
func (e *enc) span(field int, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.begin(field)
	e.bytes(1, tid[:])
	e.bytes(2, sid[:])
	e.string(3, sc.TraceState().String())
	if p := s.Parent(); p.SpanID().IsValid() {
		psid := p.SpanID()
		e.bytes(4, psid[:])
	}
	e.string(5, s.Name())
	e.uint(6, uint64(spanKind(s.SpanKind())))
	e.fixed64(7, unixNano(s.StartTime().UnixNano()))
	e.fixed64(8, unixNano(s.EndTime().UnixNano()))
	e.keyValues(9, s.Attributes())
	e.uint(10, count(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		e.begin(11)
		e.fixed64(1, unixNano(ev.Time.UnixNano()))
		e.string(2, ev.Name)
		e.keyValues(3, ev.Attributes)
		e.uint(4, count(ev.DroppedAttributeCount))
		e.end()
	}
	e.uint(12, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		e.begin(13)
		e.bytes(1, ltid[:])
		e.bytes(2, lsid[:])
		e.keyValues(4, l.Attributes) // trace_state left out, as OpenTelemetry's exporter does
		e.uint(5, count(l.DroppedAttributeCount))
		e.fixed32(6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		e.end()
	}
	e.uint(14, count(s.DroppedLinks()))
	st := s.Status()
	e.begin(15) // status {message = 2; code = 3}
	e.string(2, st.Description)
	e.uint(3, uint64(statusCode(st.Code)))
	e.end()
	e.fixed32(16, spanFlags(sc.TraceFlags(), s.Parent()))
	e.end()
}

// spanFlags are the span's trace flags, and whether its parent is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind is OTLP's SpanKind.
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 0
}

// statusCode is OTLP's Status.StatusCode.
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func unixNano(n int64) uint64 { return uint64(max(0, n)) }

func count(n int) uint64 { return uint64(min(max(n, 0), 1<<32-1)) }
