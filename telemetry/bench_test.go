package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkRecordCall: what recording one proxied tools/call costs, the
// server span, the client span with its traceparent injected, and the
// metrics, with the spans exported over OTLP/HTTP to a receiver that
// drops them (the export's CPU counts; the loop flushes every batch).
// The profile to read for BenchmarkCallTelemetry's on/off.
func BenchmarkRecordCall(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(sink.URL))
	if err != nil {
		b.Fatal(err)
	}
	bat := newBatcher(exp, func(string) string { return "" })
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(bat))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := New(tracerProvider{tp, bat}, mp, Gauges{}) // as Setup's: spans end in the batcher
	if err != nil {
		b.Fatal(err)
	}
	req := []byte(`{"name":"fx_echo","arguments":{"text":"hi"}}`)
	up := []byte(`{"name":"echo","arguments":{"text":"hi"}}`)
	res := []byte(`{"content":[{"type":"text","text":"hi"}]}`)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ctx, r := tel.StartRequest(context.Background(), "tools/call", req, "", []byte(`7`))
		_, c := tel.StartCall(ctx, "fx", "tools/call", up)
		c.Inject(up)
		c.End(res, nil, 0)
		r.End(OutcomeOK, 0, "")
		if i++; i%256 == 0 {
			bat.ForceFlush(context.Background())
		}
	}
	bat.ForceFlush(context.Background())
}
