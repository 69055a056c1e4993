package telemetry

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestInjectSpanAsThePropagator: the traceparent and tracestate written
// into _meta are what the W3C propagator writes, whatever the params.
func TestInjectSpanAsThePropagator(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=a,other=b")
	if err != nil {
		t.Fatal(err)
	}
	base := trace.SpanContextConfig{
		TraceID: trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
		SpanID:  trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
	}
	sampled, unsampled, withState := base, base, base
	sampled.TraceFlags = trace.FlagsSampled
	withState.TraceFlags, withState.TraceState = trace.FlagsSampled, ts
	for _, cfg := range []trace.SpanContextConfig{sampled, unsampled, withState} {
		sc := trace.NewSpanContext(cfg)
		want := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), want)
		for _, params := range []string{`{}`, ` { } `, `{"name":"echo"}`, "{\n \"a\": 1}",
			`{"name":"echo","_meta":{"progressToken":1}}`, `{"_meta":{}}`} {
			out := injectSpan(sc, []byte(params))
			var got struct {
				Meta map[string]any `json:"_meta"`
			}
			var all, in map[string]any
			if err := json.Unmarshal(out, &got); err != nil || json.Unmarshal(out, &all) != nil {
				t.Fatalf("injectSpan(%s) = %s: not JSON: %v", params, out, err)
			}
			json.Unmarshal([]byte(params), &in)
			for k, v := range want {
				if got.Meta[k] != v {
					t.Errorf("injectSpan(%s) = %s: %s %v, want %q", params, out, k, got.Meta[k], v)
				}
			}
			if want["tracestate"] == "" && got.Meta["tracestate"] != nil {
				t.Errorf("injectSpan(%s) = %s: a tracestate from none", params, out)
			}
			if m, ok := in["_meta"].(map[string]any); ok && m["progressToken"] != nil && got.Meta["progressToken"] == nil {
				t.Errorf("injectSpan(%s) = %s: lost progressToken", params, out)
			}
			delete(all, "_meta")
			delete(in, "_meta")
			if !reflect.DeepEqual(all, in) {
				t.Errorf("injectSpan(%s) = %s: other members changed", params, out)
			}
		}
	}
	if out := injectSpan(trace.SpanContext{}, []byte(`{}`)); string(out) != `{}` {
		t.Errorf("injectSpan(invalid) = %s, want params unchanged", out)
	}
}

// TestSpanNamesAndTargets: each method's span is named after its tool
// or prompt (decoded, cached or not), and carries it, or the resource's
// URI, as an attribute.
func TestSpanNamesAndTargets(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel, err := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil, Gauges{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		method, params, name string
		attr                 attribute.KeyValue
	}{
		{"tools/call", `{"name":"e\u0063ho","arguments":{"name":"x"}}`, "tools/call echo", AttrTool.String("echo")},
		{"tools/call", `{"name":"e\u0063ho"}`, "tools/call echo", AttrTool.String("echo")}, // cached
		{"tools/call", `{"name":"other"}`, "tools/call other", AttrTool.String("other")},
		{"prompts/get", `{"name":"echo"}`, "prompts/get echo", AttrPrompt.String("echo")},
		{"resources/read", `{"uri":"file:///a"}`, "resources/read", AttrResource.String("file:///a")},
		{"tools/list", `{"name":"x"}`, "tools/list", attribute.KeyValue{}},
		{"tools/call", `[1]`, "tools/call", AttrTool.String("")},
	}
	for _, c := range cases {
		_, r := tel.StartRequest(context.Background(), c.method, []byte(c.params), "", nil)
		r.End(OutcomeOK, 0, "")
		spans := rec.Ended()
		s := spans[len(spans)-1]
		if s.Name() != c.name {
			t.Errorf("%s %s: span %q, want %q", c.method, c.params, s.Name(), c.name)
		}
		var got []attribute.KeyValue
		for _, kv := range s.Attributes() {
			if kv.Key == AttrTool || kv.Key == AttrPrompt || kv.Key == AttrResource {
				got = append(got, kv)
			}
		}
		if c.attr.Valid() != (len(got) == 1) || c.attr.Valid() && got[0] != c.attr {
			t.Errorf("%s %s: target attributes %v, want %v", c.method, c.params, got, c.attr)
		}
	}
}
