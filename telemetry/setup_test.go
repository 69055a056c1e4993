package telemetry

import (
	"context"
	"strings"
	"testing"
)

// clearEnv unsets what Setup reads, so that the machine's own
// environment cannot turn export on.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		t.Setenv(k, "")
	}
}

func TestSetup(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name            string
		env             map[string]string
		pull            bool
		traces, metrics bool
		err             string
	}{
		{name: "nothing set"},
		{name: "pull alone", pull: true, metrics: true},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, traces: true, metrics: true},
		{name: "traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, traces: true},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, traces: true, metrics: true},
		{name: "traces none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"}, metrics: true},
		{name: "disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}},
		{name: "unknown exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin"`},
		{name: "http/json", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: `"http/json"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			p, err := Setup(ctx, &Options{Pull: tc.pull, Version: "test"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Setup: %v; want an error naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				// Nothing listens at the endpoint: the last export is not waited for.
				sctx, cancel := context.WithCancel(ctx)
				cancel()
				p.Shutdown(sctx)
			}()
			if (p.TracerProvider != nil) != tc.traces || (p.MeterProvider != nil) != tc.metrics || (p.MetricsHandler != nil) != tc.pull {
				t.Errorf("traces %v, metrics %v, handler %v; want %v, %v, %v", p.TracerProvider != nil,
					p.MeterProvider != nil, p.MetricsHandler != nil, tc.traces, tc.metrics, tc.pull)
			}
		})
	}
}
