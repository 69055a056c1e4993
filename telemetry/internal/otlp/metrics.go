package otlp

import (
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Metrics appends to b an ExportMetricsServiceRequest holding rm. A
// metric of an aggregation OTLP has no message for is left out and
// named in the error; the rest is written.
func Metrics(b []byte, rm *metricdata.ResourceMetrics) ([]byte, error) {
	e := &enc{b: b}
	var err error
	e.begin(1) // resource_metrics
	e.resource(1, rm.Resource)
	for _, sm := range rm.ScopeMetrics {
		e.begin(2) // scope_metrics
		e.scope(1, sm.Scope)
		for _, m := range sm.Metrics {
			if merr := e.metric(2, m); merr != nil && err == nil {
				err = merr
			}
		}
		e.string(3, sm.Scope.SchemaURL)
		e.end()
	}
	if rm.Resource != nil {
		e.string(3, rm.Resource.SchemaURL())
	}
	e.end()
	return e.b, err
}

// metric writes a Metric as field, unless its data is of no known kind.
func (e *enc) metric(field int, m metricdata.Metrics) error {
	mark := len(e.b)
	e.begin(field)
	e.string(1, m.Name)
	e.string(2, m.Description)
	e.string(3, m.Unit)
	var err error
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		gauge(e, d)
	case metricdata.Gauge[float64]:
		gauge(e, d)
	case metricdata.Sum[int64]:
		err = sum(e, d)
	case metricdata.Sum[float64]:
		err = sum(e, d)
	case metricdata.Histogram[int64]:
		err = histogram(e, d)
	case metricdata.Histogram[float64]:
		err = histogram(e, d)
	case metricdata.ExponentialHistogram[int64]:
		err = expHistogram(e, d)
	case metricdata.ExponentialHistogram[float64]:
		err = expHistogram(e, d)
	case metricdata.Summary:
		summary(e, d)
	default:
		err = fmt.Errorf("otlp: metric %s: unknown aggregation %T", m.Name, d)
	}
	if err != nil {
		// Leave it out whole.
		e.b, e.marks = e.b[:mark], e.marks[:len(e.marks)-1]
		return err
	}
	e.end()
	return nil
}

// temporality is OTLP's AggregationTemporality.
func temporality(t metricdata.Temporality) (uint64, error) {
	switch t {
	case metricdata.DeltaTemporality:
		return 1, nil
	case metricdata.CumulativeTemporality:
		return 2, nil
	}
	return 0, fmt.Errorf("otlp: unknown temporality %s", t)
}

func gauge[N int64 | float64](e *enc, g metricdata.Gauge[N]) {
	e.begin(5) // gauge {data_points = 1}
	numberPoints(e, g.DataPoints)
	e.end()
}

func sum[N int64 | float64](e *enc, s metricdata.Sum[N]) error {
	t, err := temporality(s.Temporality)
	if err != nil {
		return err
	}
	e.begin(7) // sum {data_points = 1; aggregation_temporality = 2; is_monotonic = 3}
	numberPoints(e, s.DataPoints)
	e.uint(2, t)
	e.bool(3, s.IsMonotonic)
	e.end()
	return nil
}

// numberPoints writes NumberDataPoints as field 1.
func numberPoints[N int64 | float64](e *enc, pts []metricdata.DataPoint[N]) {
	for _, p := range pts {
		e.begin(1)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		numberValue(e, p.Value, 4, 6)
		exemplars(e, 5, p.Exemplars)
		e.attrSet(7, &p.Attributes)
		e.end()
	}
}

// numberValue writes v as the double field asDouble or the sfixed64
// field asInt of a oneof.
func numberValue[N int64 | float64](e *enc, v N, asDouble, asInt int) {
	switch x := any(v).(type) {
	case int64:
		e.fixed64Always(asInt, uint64(x))
	case float64:
		e.double(asDouble, x)
	}
}

func exemplars[N int64 | float64](e *enc, field int, xs []metricdata.Exemplar[N]) {
	for _, x := range xs {
		e.begin(field) // Exemplar
		e.fixed64(2, timeNano(x.Time))
		numberValue(e, x.Value, 3, 6)
		e.bytes(4, x.SpanID)
		e.bytes(5, x.TraceID)
		e.keyValues(7, x.FilteredAttributes)
		e.end()
	}
}

func histogram[N int64 | float64](e *enc, h metricdata.Histogram[N]) error {
	t, err := temporality(h.Temporality)
	if err != nil {
		return err
	}
	e.begin(9) // histogram {data_points = 1; aggregation_temporality = 2}
	for _, p := range h.DataPoints {
		e.begin(1)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		e.fixed64(4, p.Count)
		e.double(5, float64(p.Sum))
		e.packedFixed64(6, p.BucketCounts)
		bounds := make([]uint64, len(p.Bounds))
		for i, v := range p.Bounds {
			bounds[i] = math.Float64bits(v)
		}
		e.packedFixed64(7, bounds)
		exemplars(e, 8, p.Exemplars)
		e.attrSet(9, &p.Attributes)
		if v, ok := p.Min.Value(); ok {
			e.double(11, float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			e.double(12, float64(v))
		}
		e.end()
	}
	e.uint(2, t)
	e.end()
	return nil
}

func expHistogram[N int64 | float64](e *enc, h metricdata.ExponentialHistogram[N]) error {
	t, err := temporality(h.Temporality)
	if err != nil {
		return err
	}
	e.begin(10) // exponential_histogram {data_points = 1; aggregation_temporality = 2}
	for _, p := range h.DataPoints {
		e.begin(1)
		e.attrSet(1, &p.Attributes)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		e.fixed64(4, p.Count)
		e.double(5, float64(p.Sum))
		e.sint(6, p.Scale)
		e.fixed64(7, p.ZeroCount)
		buckets(e, 8, p.PositiveBucket)
		buckets(e, 9, p.NegativeBucket)
		exemplars(e, 11, p.Exemplars)
		if v, ok := p.Min.Value(); ok {
			e.double(12, float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			e.double(13, float64(v))
		}
		if p.ZeroThreshold != 0 {
			e.double(14, p.ZeroThreshold)
		}
		e.end()
	}
	e.uint(2, t)
	e.end()
	return nil
}

// buckets writes Buckets {offset = 1; bucket_counts = 2} as field.
func buckets(e *enc, field int, b metricdata.ExponentialBucket) {
	e.begin(field)
	e.sint(1, b.Offset)
	e.packedVarint(2, b.Counts)
	e.end()
}

func summary(e *enc, s metricdata.Summary) {
	e.begin(11) // summary {data_points = 1}
	for _, p := range s.DataPoints {
		e.begin(1)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		e.fixed64(4, p.Count)
		if p.Sum != 0 {
			e.double(5, p.Sum)
		}
		for _, q := range p.QuantileValues {
			e.begin(6)
			if q.Quantile != 0 {
				e.double(1, q.Quantile)
			}
			if q.Value != 0 {
				e.double(2, q.Value)
			}
			e.end()
		}
		e.attrSet(7, &p.Attributes)
		e.end()
	}
	e.end()
}

func timeNano(t time.Time) uint64 { return unixNano(t.UnixNano()) }
