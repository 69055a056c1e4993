package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestTraceHeader: a request whose context holds a span carries its
// traceparent header; one without carries none.
func TestTraceHeader(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Traceparent")
	}))
	defer srv.Close()
	c := &http.Client{Transport: traceHeader{http.DefaultTransport}}
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	for _, tc := range []struct {
		ctx  context.Context
		want string
	}{
		{trace.ContextWithSpanContext(context.Background(), sc), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		{context.Background(), ""},
	} {
		req, _ := http.NewRequestWithContext(tc.ctx, "POST", srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := <-got; h != tc.want {
			t.Errorf("traceparent %q; want %q", h, tc.want)
		}
		if req.Header.Get("Traceparent") != "" {
			t.Error("the caller's request was changed")
		}
	}
}
