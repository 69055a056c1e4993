package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx/mcpx/telemetry/internal/otlp"
)

// Options configure [Setup]. A nil *Options means the defaults.
type Options struct {
	// Version is mcpx's version, the resource's service.version.
	Version string
	// Pull adds a Prometheus reader, served by Providers.MetricsHandler
	// (serve --http's /metrics), whatever the environment says about
	// OTLP. Off, metrics exist only when they are exported.
	Pull bool
	// Logger receives what the exporters report (a collector that cannot
	// be reached); nil discards.
	Logger *slog.Logger
}

// Providers are what [Setup] made. A nil provider means that signal is
// off; pass them to [New].
type Providers struct {
	// TracerProvider exports spans over OTLP; nil when tracing is off.
	TracerProvider trace.TracerProvider
	// MeterProvider feeds OTLP and the Prometheus reader; nil when
	// neither is on.
	MeterProvider metric.MeterProvider
	// MetricsHandler serves the metrics in Prometheus text format; nil
	// without Options.Pull.
	MetricsHandler http.Handler

	pull     *sdkmetric.ManualReader // MetricsHandler's reader, for Numbers; nil without Pull
	shutdown []func(context.Context) error
}

// Shutdown flushes what is queued (spans in the batch, the last metrics)
// and stops the exporters, within ctx. It is safe on a nil *Providers.
func (p *Providers) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, f := range p.shutdown {
		errs = append(errs, f(ctx))
	}
	p.shutdown = nil
	return errors.Join(errs...)
}

// tracerProvider is the SDK's provider with the batcher it exports
// through, which ends the recorder's spans ([spanEnder]).
type tracerProvider struct {
	*sdktrace.TracerProvider
	b *batcher
}

func (p tracerProvider) endLater(e pendingEnd) bool { return p.b.endLater(e) }

// Signals that can be exported.
const (
	signalTraces  = "TRACES"
	signalMetrics = "METRICS"
)

// Setup builds the providers the process environment asks for (the OTLP
// exporters read their own variables from it too: endpoint, headers,
// timeout, compression, certificates). OTLP export of a
// signal is on when an endpoint is set for it (OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT) or its exporter is
// named (OTEL_{TRACES,METRICS}_EXPORTER=otlp), and off with
// OTEL_{TRACES,METRICS}_EXPORTER=none or OTEL_SDK_DISABLED=true. The
// protocol is OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the default) or grpc. The
// resource takes OTEL_SERVICE_NAME (default "mcpx") and
// OTEL_RESOURCE_ATTRIBUTES; the sampler OTEL_TRACES_SAMPLER; the batch
// OTEL_BSP_*; the export interval OTEL_METRIC_EXPORT_INTERVAL.
func Setup(ctx context.Context, opts *Options) (*Providers, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	traces, err := exporting(os.Getenv, signalTraces)
	if err != nil {
		return nil, err
	}
	metrics, err := exporting(os.Getenv, signalMetrics)
	if err != nil {
		return nil, err
	}
	p := &Providers{}
	if !traces && !metrics && !o.Pull {
		return p, nil
	}
	res, err := newResource(ctx, o)
	if err != nil {
		return nil, err
	}
	if traces {
		exp, err := traceExporter(ctx, protocol(os.Getenv, signalTraces), o.Logger)
		if err != nil {
			return nil, err
		}
		b := newBatcher(exp, os.Getenv)
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithResource(res))
		p.TracerProvider = tracerProvider{tp, b}
		p.shutdown = append(p.shutdown, tp.Shutdown)
	}
	if !metrics && !o.Pull {
		return p, nil
	}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if os.Getenv("OTEL_METRICS_EXEMPLAR_FILTER") == "" {
		// mcpx records its measurements outside any span's context, so
		// the default filter (trace_based) keeps no exemplar: it only
		// costs each measurement its reservoir's Offer.
		mopts = append(mopts, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	}
	if metrics {
		exp, err := metricExporter(ctx, protocol(os.Getenv, signalMetrics), o.Logger)
		if err != nil {
			p.Shutdown(ctx)
			return nil, err
		}
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if o.Pull {
		// A reader of its own, which serves /metrics as it is scraped.
		r := sdkmetric.NewManualReader()
		mopts = append(mopts, sdkmetric.WithReader(r))
		p.MetricsHandler = promHandler{reader: r, log: o.Logger}
		p.pull = r
	}
	mp := sdkmetric.NewMeterProvider(mopts...)
	p.MeterProvider = mp
	p.shutdown = append(p.shutdown, mp.Shutdown)
	return p, nil
}

// exporting reports whether the environment asks for OTLP export of a
// signal.
func exporting(getenv func(string) string, signal string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	key := "OTEL_" + signal + "_EXPORTER"
	switch v := strings.ToLower(strings.TrimSpace(getenv(key))); v {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
			getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("telemetry: %s=%q: mcpx exports with otlp, or none", key, v)
	}
}

// protocol is the OTLP protocol asked for a signal.
func protocol(getenv func(string) string, signal string) string {
	if v := getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"); v != "" {
		return strings.TrimSpace(v)
	}
	if v := getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); v != "" {
		return strings.TrimSpace(v)
	}
	return "http/protobuf"
}

func unsupported(signal, proto string) error {
	return fmt.Errorf("telemetry: OTLP protocol %q for %s is not supported: use http/protobuf or grpc (OTEL_EXPORTER_OTLP_PROTOCOL)",
		proto, strings.ToLower(signal))
}

// traceExporter is the OTLP span exporter for proto; it reads its
// endpoint, headers and the rest from the environment.
func traceExporter(_ context.Context, proto string, log *slog.Logger) (sdktrace.SpanExporter, error) {
	cfg, err := exportConfig(otlp.SignalTraces, signalTraces, proto, log)
	if err != nil {
		return nil, err
	}
	return otlp.NewTraceExporter(cfg), nil
}

// metricExporter is traceExporter for metrics.
func metricExporter(_ context.Context, proto string, log *slog.Logger) (sdkmetric.Exporter, error) {
	cfg, err := exportConfig(otlp.SignalMetrics, signalMetrics, proto, log)
	if err != nil {
		return nil, err
	}
	return otlp.NewMetricExporter(cfg), nil
}

// exportConfig is a signal's OTLP configuration from the environment;
// the settings it leaves out are logged, as OpenTelemetry's exporters
// log them.
func exportConfig(s otlp.Signal, name, proto string, log *slog.Logger) (otlp.Config, error) {
	if proto != otlp.ProtocolHTTP && proto != otlp.ProtocolGRPC {
		return otlp.Config{}, unsupported(name, proto)
	}
	cfg, err := otlp.FromEnv(os.Getenv, os.ReadFile, s, proto)
	if err != nil {
		return cfg, err
	}
	for _, p := range cfg.Problems {
		log.Warn("OTLP setting ignored: " + p)
	}
	return cfg, nil
}

// newResource names mcpx: service.name "mcpx" unless OTEL_SERVICE_NAME
// or OTEL_RESOURCE_ATTRIBUTES say otherwise, and its version.
func newResource(ctx context.Context, o Options) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", "mcpx")}
	if o.Version != "" {
		attrs = append(attrs, attribute.String("service.version", o.Version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource from OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return res, nil
}
