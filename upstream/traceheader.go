package upstream

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceHeader puts the trace context of a request's context (the span of
// mcpx's call, when mcpx traces) in its traceparent and tracestate
// headers, so that a remote server's HTTP instrumentation continues the
// trace that params._meta carries to its MCP layer. Without a span it
// adds nothing.
type traceHeader struct{ base http.RoundTripper }

func (t traceHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	if trace.SpanContextFromContext(req.Context()).IsValid() {
		req = req.Clone(req.Context()) // a RoundTripper must not change its request
		propagation.TraceContext{}.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
	return t.base.RoundTrip(req)
}
