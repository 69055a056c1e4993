package otlp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// errShutdown is an export after Shutdown.
var errShutdown = errors.New("otlp: exporter is shut down")

// TraceExporter sends spans over OTLP; it is an [sdktrace.SpanExporter].
type TraceExporter struct {
	c    *client
	mu   sync.Mutex
	done bool
}

// NewTraceExporter returns an exporter of spans as cfg says.
func NewTraceExporter(cfg Config) *TraceExporter { return &TraceExporter{c: newClient(cfg)} }

var _ sdktrace.SpanExporter = (*TraceExporter)(nil)

// ExportSpans sends spans in one request, retried as OTLP asks within ctx.
func (x *TraceExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	x.mu.Lock()
	done := x.done
	x.mu.Unlock()
	if done {
		return errShutdown
	}
	if len(spans) == 0 {
		return nil
	}
	rejected, err := x.c.send(ctx, Traces(nil, spans))
	if err == nil && rejected != "" {
		err = fmt.Errorf("OTLP export of spans: the collector kept only part: %s", rejected)
	}
	return err
}

// Shutdown stops the exporter; an export under way ends its retries.
func (x *TraceExporter) Shutdown(ctx context.Context) error {
	x.mu.Lock()
	x.done = true
	x.mu.Unlock()
	x.c.close()
	return ctx.Err()
}

// MetricExporter sends metrics over OTLP; it is an [sdkmetric.Exporter],
// with the temporality and histogram aggregation its Config asks for.
type MetricExporter struct {
	c           *client
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
	mu          sync.Mutex
	done        bool
}

// NewMetricExporter returns an exporter of metrics as cfg says.
func NewMetricExporter(cfg Config) *MetricExporter {
	x := &MetricExporter{c: newClient(cfg), temporality: sdkmetric.DefaultTemporalitySelector, aggregation: sdkmetric.DefaultAggregationSelector}
	switch cfg.Temporality {
	case "delta":
		x.temporality = sdkmetric.DeltaTemporalitySelector
	case "lowmemory":
		x.temporality = sdkmetric.LowMemoryTemporalitySelector
	}
	if cfg.Histogram == "base2_exponential_bucket_histogram" {
		x.aggregation = func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
			if k == sdkmetric.InstrumentKindHistogram {
				return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
			}
			return sdkmetric.DefaultAggregationSelector(k)
		}
	}
	return x
}

var _ sdkmetric.Exporter = (*MetricExporter)(nil)

// Temporality is the temporality of an instrument kind's metrics.
func (x *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return x.temporality(k)
}

// Aggregation is the default aggregation of an instrument kind.
func (x *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return x.aggregation(k)
}

// Export sends rm in one request, retried as OTLP asks within ctx.
func (x *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	x.mu.Lock()
	done := x.done
	x.mu.Unlock()
	if done {
		return errShutdown
	}
	msg, encErr := Metrics(nil, rm)
	rejected, err := x.c.send(ctx, msg)
	if err == nil && rejected != "" {
		err = fmt.Errorf("OTLP export of metrics: the collector kept only part: %s", rejected)
	}
	return errors.Join(encErr, err)
}

// ForceFlush does nothing: nothing is held between exports.
func (x *MetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

// Shutdown stops the exporter; an export under way ends its retries.
func (x *MetricExporter) Shutdown(ctx context.Context) error {
	x.mu.Lock()
	x.done = true
	x.mu.Unlock()
	x.c.close()
	return ctx.Err()
}
