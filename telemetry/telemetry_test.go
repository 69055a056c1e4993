package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const clientParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestNilRecordsNothing(t *testing.T) {
	tel, err := New(nil, nil, Gauges{})
	if err != nil || tel != nil {
		t.Fatalf("New(nil, nil) = %v, %v; want nil, nil", tel, err)
	}
	ctx, r := tel.StartRequest(context.Background(), "tools/call", []byte(`{"name":"x"}`), "", nil)
	ctx, c := tel.StartCall(ctx, "s", "tools/call", []byte(`{"name":"x"}`))
	params := []byte(`{"name":"x"}`)
	if got := c.Inject(params); string(got) != string(params) {
		t.Errorf("Inject with telemetry off changed params: %s", got)
	}
	c.End(nil, errors.New("x"), 0)
	r.End(OutcomeError, -1, "x")
	if trace.SpanFromContext(ctx).SpanContext().IsValid() {
		t.Error("a span with telemetry off")
	}
}

func TestSpansContinueTheClientsTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tel, err := New(tp, nil, Gauges{})
	if err != nil {
		t.Fatal(err)
	}
	req := []byte(`{"name":"fx_echo","arguments":{},"_meta":{"traceparent":"` + clientParent + `","progressToken":1}}`)
	ctx, r := tel.StartRequest(context.Background(), "tools/call", req, "sess", []byte(`7`))
	up := []byte(`{"name":"echo","arguments":{},"_meta":{"traceparent":"` + clientParent + `","progressToken":1}}`)
	_, c := tel.StartCall(ctx, "fx", "tools/call", up)
	sent := c.Inject(up)
	c.End([]byte(`{"content":[],"isError":true}`), nil, 0)
	r.End(OutcomeIsError, 0, "")

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans; want 2", len(spans))
	}
	call, server := spans[0], spans[1]
	if server.Name() != "tools/call fx_echo" || call.Name() != "tools/call echo" {
		t.Errorf("span names %q, %q", server.Name(), call.Name())
	}
	if got := server.Parent().SpanID().String(); got != "b7ad6b7169203331" || !server.Parent().IsRemote() {
		t.Errorf("request span's parent = %s; want the client's b7ad6b7169203331", got)
	}
	if server.SpanContext().TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("trace id %s: the client's was not continued", server.SpanContext().TraceID())
	}
	if call.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Error("the upstream call's span is not the request span's child")
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(sent, &p); err != nil {
		t.Fatalf("injected params do not parse: %v: %s", err, sent)
	}
	want := "00-" + call.SpanContext().TraceID().String() + "-" + call.SpanContext().SpanID().String() + "-01"
	if p.Meta["traceparent"] != want || p.Meta["progressToken"] != float64(1) {
		t.Errorf("sent _meta = %v; want traceparent %s and the progress token kept", p.Meta, want)
	}
	attrs := attribute.NewSet(call.Attributes()...)
	for k, v := range map[attribute.Key]string{AttrServer: "fx", AttrTool: "echo", AttrOutcome: "isError", AttrErrorType: "tool_error"} {
		if got, _ := attrs.Value(k); got.AsString() != v {
			t.Errorf("call span %s = %q; want %q", k, got.AsString(), v)
		}
	}
}

func TestSetMeta(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{"_meta":{"traceparent":"tp"}}`},
		{`{}`, `{"_meta":{"traceparent":"tp"}}`},
		{`{"name":"a"}`, `{"_meta":{"traceparent":"tp"},"name":"a"}`},
		{`{"_meta":{"traceparent":"old","k":1}}`, `{"_meta":{"traceparent":"tp","k":1}}`},
		{`{"_meta":null}`, `{"_meta":{"traceparent":"tp"}}`},
		{`{"_meta":"odd"}`, `{"_meta":"odd"}`},
		{`[1]`, `[1]`},
	} {
		if got := SetMeta([]byte(tc.in), "tp", ""); string(got) != tc.want {
			t.Errorf("SetMeta(%s) = %s; want %s", tc.in, got, tc.want)
		}
	}
	if !HasMeta([]byte(`{"_meta":{"traceparent":"x"}}`)) || HasMeta([]byte(`{"_meta":{}}`)) {
		t.Error("HasMeta")
	}
}

func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel, err := New(nil, mp, Gauges{
		States:   func() map[string]int { return map[string]int{"ready": 2, "failed": 1} },
		Withheld: func() map[string]int { return map[string]int{"fx": 3} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	ctx := context.Background()
	for _, res := range []string{`{"content":[]}`, `{"content":[]}`, `{"isError":true}`} {
		_, c := tel.StartCall(ctx, "fx", "tools/call", []byte(`{"name":"echo"}`))
		c.End([]byte(res), nil, 0)
	}
	_, c := tel.StartCall(ctx, "fx", "tools/call", []byte(`{"name":"echo"}`))
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					o, _ := p.Attributes.Value(AttrOutcome)
					got[m.Name+"/"+o.AsString()] += p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					k, ok := p.Attributes.Value(AttrState)
					if !ok {
						k, _ = p.Attributes.Value(AttrServer)
					}
					got[m.Name+"/"+k.AsString()] += p.Value
				}
			}
		}
	}
	c.End(nil, context.Canceled, 0)
	want := map[string]int64{MetricCalls + "/ok": 2, MetricCalls + "/isError": 1, MetricInflight + "/": 1,
		MetricUpstreams + "/ready": 2, MetricUpstreams + "/failed": 1, MetricWithheld + "/fx": 3}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d; want %d (all: %v)", k, got[k], v, got)
		}
	}
}
