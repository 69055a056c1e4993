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

	"github.com/mcpx/mcpx/telemetry/internal/otlp"
)

// BenchmarkRecordCall: what recording one proxied tools/call costs, the
// server span, the client span with its traceparent injected, and the
// metrics, with the spans exported over OTLP/HTTP to a receiver that
// drops them (the export's CPU counts; the loop flushes every batch):
// with mcpx's exporter, and with OpenTelemetry's it replaced. The
// profile to read for BenchmarkCallTelemetry's on/off.
func BenchmarkRecordCall(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	b.Run("mcpx", func(b *testing.B) {
		cfg, err := otlp.FromEnv(func(k string) string {
			if k == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" {
				return sink.URL
			}
			return ""
		}, nil, otlp.SignalTraces, otlp.ProtocolHTTP)
		if err != nil {
			b.Fatal(err)
		}
		benchRecordCall(b, otlp.NewTraceExporter(cfg))
	})
	b.Run("official", func(b *testing.B) {
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(sink.URL))
		if err != nil {
			b.Fatal(err)
		}
		benchRecordCall(b, exp)
	})
}

func benchRecordCall(b *testing.B, exp sdktrace.SpanExporter) {
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
