package telemetry

import (
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpx/mcpx/internal/principal"
)

// newTestProvider is Setup's tracer provider over an in-memory exporter,
// with a batch delay no test waits for.
func newTestProvider() (tracerProvider, *keptSpans) {
	exp := &keptSpans{}
	b := newBatcher(exp, func(k string) string {
		if k == "OTEL_BSP_SCHEDULE_DELAY" {
			return "3600000"
		}
		return ""
	})
	return tracerProvider{sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b)), b}, exp
}

// keptSpans is an exporter that keeps what it is given, past its
// Shutdown (tracetest's forgets it then).
type keptSpans struct {
	mu    sync.Mutex
	spans tracetest.SpanStubs
}

func (k *keptSpans) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.spans = append(k.spans, tracetest.SpanStubsFromReadOnlySpans(spans)...)
	return nil
}

func (k *keptSpans) Shutdown(context.Context) error { return nil }

func (k *keptSpans) GetSpans() tracetest.SpanStubs {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append(tracetest.SpanStubs(nil), k.spans...)
}

// The spans of a request and its call, ended by the batcher: exported
// at the flush with the attributes, status and end time End gave them.
func TestBatcherEndsSpans(t *testing.T) {
	tp, exp := newTestProvider()
	tel, err := New(tp, nil, Gauges{})
	if err != nil {
		t.Fatal(err)
	}
	// From a client let in with a named API key: the span names it.
	ctx, r := tel.StartRequest(principal.With(context.Background(), "alice"), "tools/call", []byte(`{"name":"fx_echo"}`), "s1", []byte(`7`))
	_, c := tel.StartCall(ctx, "fx", "tools/call", []byte(`{"name":"echo"}`))
	c.End([]byte(`{"isError":true}`), nil, 0)
	r.End(OutcomeError, -32603, "broken")
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans exported before the flush", n)
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans exported; want 2", len(spans))
	}
	want := map[string]struct {
		attrs  map[attribute.Key]string
		status codes.Code
	}{
		"tools/call echo": {map[attribute.Key]string{AttrServer: "fx", AttrTool: "echo", AttrOutcome: "isError", AttrErrorType: "tool_error"}, codes.Error},
		"tools/call fx_echo": {map[attribute.Key]string{AttrSession: "s1", AttrPrincipal: "alice", AttrRequestID: "7", AttrOutcome: "error",
			AttrStatusCode: "-32603", AttrErrorType: "-32603"}, codes.Error},
	}
	for _, s := range spans {
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("span %q not expected", s.Name)
			continue
		}
		got := map[attribute.Key]string{}
		for _, kv := range s.Attributes {
			got[kv.Key] = kv.Value.Emit()
		}
		for k, v := range w.attrs {
			if got[k] != v {
				t.Errorf("%s: %s = %q; want %q", s.Name, k, got[k], v)
			}
		}
		if s.Status.Code != w.status {
			t.Errorf("%s: status %v; want %v", s.Name, s.Status.Code, w.status)
		}
		if s.EndTime.Before(s.StartTime) || s.EndTime.IsZero() {
			t.Errorf("%s: ends %v, before it starts %v", s.Name, s.EndTime, s.StartTime)
		}
	}
	if spans[0].EndTime.After(spans[1].EndTime) {
		t.Error("the call's span ends after its request's")
	}
}

// A span ended before Shutdown is exported by it; one ended after is
// dropped, without blocking.
func TestBatcherShutdownEnds(t *testing.T) {
	tp, exp := newTestProvider()
	tel, err := New(tp, nil, Gauges{})
	if err != nil {
		t.Fatal(err)
	}
	_, r := tel.StartRequest(context.Background(), "ping", nil, "", nil)
	_, late := tel.StartRequest(context.Background(), "ping", nil, "", nil)
	r.End(OutcomeOK, 0, "")
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	late.End(OutcomeOK, 0, "")
	if n := len(exp.GetSpans()); n != 1 {
		t.Fatalf("%d spans exported; want 1", n)
	}
}
