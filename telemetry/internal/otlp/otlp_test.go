package otlp

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// spans are a few spans of two resources and scopes, with every kind of
// attribute, events, links, a remote parent and statuses.
func spans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	res := resource.NewSchemaless(attribute.String("service.name", "mcpx"), attribute.String("service.version", "1.2"))
	other := resource.NewSchemaless(attribute.String("service.name", "other"))
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("vendor=x,other=y")
	sc := func(sid byte, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{sid, 1, 2, 3, 4, 5, 6, 7},
			TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: remote})
	}
	start := time.Unix(1700000000, 123456789)
	attrs := []attribute.KeyValue{
		attribute.String("s", "text é"), attribute.String("empty", ""), attribute.Int64("i", -42), attribute.Int64("zero", 0),
		attribute.Float64("f", 1.5), attribute.Bool("t", true), attribute.Bool("no", false),
		attribute.StringSlice("ss", []string{"a", "", "c"}), attribute.Int64Slice("is", []int64{1, -2, 0}),
		attribute.Float64Slice("fs", []float64{0, 2.25}), attribute.BoolSlice("bs", []bool{true, false}),
	}
	stubs := tracetest.SpanStubs{
		{Name: "tools/call echo", SpanContext: sc(1, false), Parent: sc(9, true), SpanKind: trace.SpanKindServer,
			StartTime: start, EndTime: start.Add(1500 * time.Microsecond), Attributes: attrs,
			Events: []sdktrace.Event{{Name: "ev", Time: start.Add(time.Microsecond), Attributes: attrs[:2], DroppedAttributeCount: 1}},
			Links:  []sdktrace.Link{{SpanContext: sc(7, false), Attributes: attrs[2:4]}},
			Status: sdktrace.Status{Code: codes.Error, Description: "it failed"}, DroppedAttributes: 3,
			Resource: res, InstrumentationScope: instrumentation.Scope{Name: "github.com/mcpx/mcpx", Version: "1"}},
		{Name: "tools/call", SpanContext: sc(2, false), Parent: sc(1, false), SpanKind: trace.SpanKindClient,
			StartTime: start, EndTime: start.Add(time.Millisecond), Status: sdktrace.Status{Code: codes.Ok},
			Resource: res, InstrumentationScope: instrumentation.Scope{Name: "github.com/mcpx/mcpx", Version: "1"}},
		{Name: "internal", SpanContext: sc(3, false), StartTime: start, EndTime: start,
			Resource: res, InstrumentationScope: instrumentation.Scope{Name: "other-scope", SchemaURL: "https://opentelemetry.io/schemas/1.26.0"}},
		{Name: "elsewhere", SpanContext: sc(4, false), SpanKind: trace.SpanKindConsumer, StartTime: start, EndTime: start,
			Resource: other, InstrumentationScope: instrumentation.Scope{Name: "github.com/mcpx/mcpx"}},
	}
	return stubs.Snapshots()
}

// receiver is an OTLP/HTTP collector keeping the requests it got.
type receiver struct {
	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
	headers []http.Header
	status  atomic.Int32 // answer with this status once, then 200
	url     string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if s := r.status.Swap(0); s != 0 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", int(s))
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				t.Error(err)
				return
			}
			body = gz
		}
		b, _ := io.ReadAll(body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.headers = append(r.headers, req.Header.Clone())
		switch req.URL.Path {
		case "/v1/traces":
			m := &coltracepb.ExportTraceServiceRequest{}
			if err := proto.Unmarshal(b, m); err != nil {
				t.Errorf("traces do not decode as OTLP: %v", err)
			}
			r.traces = append(r.traces, m)
		case "/v1/metrics":
			m := &colmetricpb.ExportMetricsServiceRequest{}
			if err := proto.Unmarshal(b, m); err != nil {
				t.Errorf("metrics do not decode as OTLP: %v", err)
			}
			r.metrics = append(r.metrics, m)
		default:
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestTracesAsTheOfficialExporter: the spans this package sends decode
// as OTLP into exactly what OpenTelemetry's own exporter sends for them.
func TestTracesAsTheOfficialExporter(t *testing.T) {
	ctx := context.Background()
	r := newReceiver(t)
	u, _ := url.Parse(r.url)
	official, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	if err := official.ExportSpans(ctx, spans(t)); err != nil {
		t.Fatal(err)
	}
	official.Shutdown(ctx)
	cfg, err := FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.url}), nil, SignalTraces, ProtocolHTTP)
	if err != nil {
		t.Fatal(err)
	}
	ours := NewTraceExporter(cfg)
	if err := ours.ExportSpans(ctx, spans(t)); err != nil {
		t.Fatal(err)
	}
	ours.Shutdown(ctx)
	if len(r.traces) != 2 {
		t.Fatalf("%d requests, want 2", len(r.traces))
	}
	want, got := r.traces[0], r.traces[1]
	sortResources(want)
	sortResources(got)
	if !proto.Equal(want, got) {
		t.Errorf("our request differs from the official exporter's:\n got %v\nwant %v", got, want)
	}
	if ct := r.headers[1].Get("Content-Type"); ct != "application/x-protobuf" {
		t.Errorf("Content-Type %q", ct)
	}
}

// sortResources orders the official exporter's resources (it groups them
// in a map) by service name.
func sortResources(m *coltracepb.ExportTraceServiceRequest) {
	sort.Slice(m.ResourceSpans, func(i, j int) bool {
		return m.ResourceSpans[i].Resource.String() < m.ResourceSpans[j].Resource.String()
	})
}

// resourceMetrics has data of every kind the SDK makes.
func resourceMetrics() *metricdata.ResourceMetrics {
	now := time.Unix(1700000000, 5)
	start := now.Add(-time.Minute)
	set := attribute.NewSet(attribute.String("mcpx.server", "fx"), attribute.Int64("n", 3))
	empty := attribute.NewSet()
	return &metricdata.ResourceMetrics{
		Resource: resource.NewSchemaless(attribute.String("service.name", "mcpx")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: "github.com/mcpx/mcpx", Version: "1"},
			Metrics: []metricdata.Metrics{
				{Name: "mcpx.calls", Description: "Calls.", Unit: "{call}", Data: metricdata.Sum[int64]{
					Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, StartTime: start, Time: now, Value: 7}, {Attributes: empty, StartTime: start, Time: now, Value: 0}}}},
				{Name: "mcpx.calls.inflight", Unit: "{call}", Data: metricdata.Sum[int64]{
					Temporality: metricdata.CumulativeTemporality,
					DataPoints:  []metricdata.DataPoint[int64]{{Attributes: set, StartTime: start, Time: now, Value: -1}}}},
				{Name: "ratio", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[float64]{{StartTime: start, Time: now, Value: 0.25}}}},
				{Name: "mcpx.upstreams", Data: metricdata.Gauge[int64]{
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, Time: now, Value: 2}}}},
				{Name: "gauge.f", Data: metricdata.Gauge[float64]{
					DataPoints: []metricdata.DataPoint[float64]{{Time: now, Value: 0}}}},
				{Name: "mcp.client.operation.duration", Unit: "s", Data: metricdata.Histogram[float64]{
					Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{{Attributes: set, StartTime: start, Time: now, Count: 3,
						Bounds: []float64{0.01, 0.1, 1}, BucketCounts: []uint64{1, 0, 2, 0}, Sum: 1.5,
						Min: metricdata.NewExtrema(0.005), Max: metricdata.NewExtrema(0.9)}}}},
				{Name: "h.int", Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.HistogramDataPoint[int64]{{StartTime: start, Time: now, Count: 0, Bounds: []float64{1}, BucketCounts: []uint64{0, 0}}}}},
				{Name: "exp", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{Attributes: set, StartTime: start, Time: now, Count: 5, Sum: 12.5,
						Scale: -2, ZeroCount: 1, ZeroThreshold: 0.001, PositiveBucket: metricdata.ExponentialBucket{Offset: -3, Counts: []uint64{1, 0, 300}},
						NegativeBucket: metricdata.ExponentialBucket{Offset: 2, Counts: []uint64{1}}, Min: metricdata.NewExtrema(-1.0), Max: metricdata.NewExtrema(9.0)}}}},
				{Name: "summary", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{StartTime: start, Time: now, Count: 2, Sum: 3,
					QuantileValues: []metricdata.QuantileValue{{Quantile: 0.5, Value: 1}, {Quantile: 1, Value: 2}}}}}},
			},
		}},
	}
}

// TestMetricsAsTheOfficialExporter: the metrics this package sends decode
// as OTLP into exactly what OpenTelemetry's own exporter sends.
func TestMetricsAsTheOfficialExporter(t *testing.T) {
	ctx := context.Background()
	r := newReceiver(t)
	u, _ := url.Parse(r.url)
	official, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(u.Host), otlpmetrichttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	if err := official.Export(ctx, resourceMetrics()); err != nil {
		t.Fatal(err)
	}
	official.Shutdown(ctx)
	cfg, err := FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": r.url + "/v1/metrics"}), nil, SignalMetrics, ProtocolHTTP)
	if err != nil {
		t.Fatal(err)
	}
	ours := NewMetricExporter(cfg)
	if err := ours.Export(ctx, resourceMetrics()); err != nil {
		t.Fatal(err)
	}
	if len(r.metrics) != 2 {
		t.Fatalf("%d requests, want 2", len(r.metrics))
	}
	if !proto.Equal(r.metrics[0], r.metrics[1]) {
		t.Errorf("our request differs from the official exporter's:\n got %v\nwant %v", r.metrics[1], r.metrics[0])
	}
	ours.Shutdown(ctx)
	if err := ours.Export(ctx, resourceMetrics()); err == nil {
		t.Error("an export after Shutdown did not fail")
	}
}

// TestRetryAndHeaders: a 503 is retried after Retry-After; headers and
// gzip from the environment reach the collector.
func TestRetryAndHeaders(t *testing.T) {
	ctx := context.Background()
	r := newReceiver(t)
	r.status.Store(http.StatusServiceUnavailable)
	cfg, err := FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.url, "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b, x-team=mcpx",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip"}), nil, SignalTraces, ProtocolHTTP)
	if err != nil {
		t.Fatal(err)
	}
	x := NewTraceExporter(cfg)
	x.c.wait = time.Millisecond
	defer x.Shutdown(ctx)
	if err := x.ExportSpans(ctx, spans(t)); err != nil {
		t.Fatal(err)
	}
	if len(r.traces) != 1 || len(r.traces[0].ResourceSpans) != 2 {
		t.Fatalf("after a 503 the collector got %d requests", len(r.traces))
	}
	h := r.headers[0]
	if h.Get("Api-Key") != "a b" || h.Get("X-Team") != "mcpx" || h.Get("Content-Encoding") != "gzip" {
		t.Errorf("headers %v", h)
	}
	r.status.Store(http.StatusBadRequest)
	if err := x.ExportSpans(ctx, spans(t)); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("a 400: %v", err)
	}
}

// grpcReceiver is the official gRPC server with OTLP's services.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
	md      []metadata.MD
}

func (g *grpcReceiver) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	g.traces, g.md = append(g.traces, req), append(g.md, md)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// metricsService is the receiver's metrics service.
type metricsService struct {
	colmetricpb.UnimplementedMetricsServiceServer
	g *grpcReceiver
}

func (m metricsService) Export(ctx context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	m.g.mu.Lock()
	defer m.g.mu.Unlock()
	m.g.metrics = append(m.g.metrics, req)
	return &colmetricpb.ExportMetricsServiceResponse{PartialSuccess: &colmetricpb.ExportMetricsPartialSuccess{RejectedDataPoints: 2, ErrorMessage: "too old"}}, nil
}

// TestGRPC: over gRPC without TLS (HTTP/2 with prior knowledge) the
// official gRPC server takes the spans and metrics, gzip and metadata
// included, and a partial success is an error naming what was rejected.
func TestGRPC(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &grpcReceiver{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, g)
	colmetricpb.RegisterMetricsServiceServer(srv, metricsService{g: g})
	go srv.Serve(l)
	defer srv.Stop()

	for _, gz := range []string{"none", "gzip"} {
		vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + l.Addr().String(), "OTEL_EXPORTER_OTLP_HEADERS": "tenant=t1",
			"OTEL_EXPORTER_OTLP_COMPRESSION": gz}
		cfg, err := FromEnv(env(vars), nil, SignalTraces, ProtocolGRPC)
		if err != nil {
			t.Fatal(err)
		}
		x := NewTraceExporter(cfg)
		if err := x.ExportSpans(ctx, spans(t)); err != nil {
			t.Fatalf("grpc, compression %s: %v", gz, err)
		}
		x.Shutdown(ctx)
		mcfg, err := FromEnv(env(vars), nil, SignalMetrics, ProtocolGRPC)
		if err != nil {
			t.Fatal(err)
		}
		mx := NewMetricExporter(mcfg)
		if err := mx.Export(ctx, resourceMetrics()); err == nil || !strings.Contains(err.Error(), "2 rejected: too old") {
			t.Errorf("a partial success: %v", err)
		}
		mx.Shutdown(ctx)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.traces) != 2 || len(g.metrics) != 2 {
		t.Fatalf("the gRPC server got %d trace and %d metric requests, want 2 and 2", len(g.traces), len(g.metrics))
	}
	if !proto.Equal(g.traces[0], g.traces[1]) {
		t.Error("gzip changed what the server got")
	}
	if n := len(g.traces[0].ResourceSpans[0].ScopeSpans[0].Spans); n != 2 {
		t.Errorf("%d spans in the first scope, want 2", n)
	}
	if got := g.md[0].Get("tenant"); len(got) != 1 || got[0] != "t1" {
		t.Errorf("metadata %v", g.md[0])
	}
}

// TestGRPCStatus: a gRPC error is the export's error, retried when OTLP
// says it may be.
func TestGRPCStatus(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/grpc")
		if calls.Add(1) == 1 {
			w.Header().Set("Grpc-Status", "14")
			w.Header().Set("Grpc-Message", "try%20later")
			return
		}
		w.Header().Set("Grpc-Status", "3")
		w.Header().Set("Grpc-Message", "bad%20request")
	}))
	srv.EnableHTTP2 = true
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	cfg, err := FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL}), nil, SignalTraces, ProtocolGRPC)
	if err != nil {
		t.Fatal(err)
	}
	x := NewTraceExporter(cfg)
	x.c.wait = time.Millisecond
	defer x.Shutdown(context.Background())
	err = x.ExportSpans(context.Background(), spans(t))
	if err == nil || !strings.Contains(err.Error(), "gRPC status 3: bad request") || calls.Load() != 2 {
		t.Errorf("after unavailable, then invalid argument: %v (%d calls)", err, calls.Load())
	}
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vars     map[string]string
		signal   Signal
		protocol string
		url      string
		timeout  time.Duration
		problems int
	}{
		{"default http", nil, SignalTraces, ProtocolHTTP, "https://localhost:4318/v1/traces", 10 * time.Second, 0},
		{"default grpc", nil, SignalMetrics, ProtocolGRPC, "https://localhost:4317", 10 * time.Second, 0},
		{"base", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/otlp"}, SignalMetrics, ProtocolHTTP, "http://collector:4318/otlp/v1/metrics", 10 * time.Second, 0},
		{"signal wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b:2/custom"}, SignalTraces, ProtocolHTTP, "https://b:2/custom", 10 * time.Second, 0},
		{"signal root", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:2"}, SignalTraces, ProtocolHTTP, "http://b:2/", 10 * time.Second, 0},
		{"grpc host", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317/ignored"}, SignalTraces, ProtocolGRPC, "http://collector:4317", 10 * time.Second, 0},
		{"grpc bare", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, SignalTraces, ProtocolGRPC, "http://collector:4317", 10 * time.Second, 0},
		{"timeout", map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "oops"}, SignalMetrics, ProtocolHTTP, "https://localhost:4318/v1/metrics", 2500 * time.Millisecond, 1},
		{"bad headers", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue,=x,ok=1"}, SignalTraces, ProtocolHTTP, "https://localhost:4318/v1/traces", 10 * time.Second, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromEnv(env(tc.vars), nil, tc.signal, tc.protocol)
			if err != nil {
				t.Fatal(err)
			}
			if got := newClient(c).url; got != tc.url && c.URL.String() != tc.url {
				t.Errorf("URL %s (request URL %s), want %s", c.URL, got, tc.url)
			}
			if c.Timeout != tc.timeout || len(c.Problems) != tc.problems {
				t.Errorf("timeout %v, problems %q; want %v and %d", c.Timeout, c.Problems, tc.timeout, tc.problems)
			}
		})
	}
	c, _ := FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=2", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "c=3"}), nil, SignalTraces, ProtocolHTTP)
	if len(c.Headers) != 1 || c.Headers["c"] != "3" {
		t.Errorf("a signal's headers replace the others: %v", c.Headers)
	}
}
