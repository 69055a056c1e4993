package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP collector for tests, built on OTel's own
// protobuf types: it decodes what is posted to /v1/traces and /v1/metrics
// and keeps the spans and the metric names.
type otlpReceiver struct {
	url     string
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics map[string]bool
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{metrics: map[string]bool{}}
	read := func(w http.ResponseWriter, req *http.Request, msg proto.Message) bool {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return false
			}
			body = gz
		}
		b, err := io.ReadAll(body)
		if err == nil {
			err = proto.Unmarshal(b, msg)
		}
		if err != nil {
			t.Errorf("OTLP receiver: %s: %v", req.URL.Path, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		return true
	}
	reply := func(w http.ResponseWriter, msg proto.Message) {
		b, _ := proto.Marshal(msg)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var msg coltracepb.ExportTraceServiceRequest
		if !read(w, req, &msg) {
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		reply(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var msg colmetricpb.ExportMetricsServiceRequest
		if !read(w, req, &msg) {
			return
		}
		r.mu.Lock()
		for _, rm := range msg.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					r.metrics[m.Name] = true
				}
			}
		}
		r.mu.Unlock()
		reply(w, &colmetricpb.ExportMetricsServiceResponse{})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// env is what points mcpx at the receiver.
func (r *otlpReceiver) env() []string {
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + r.url, "OTEL_SERVICE_NAME=mcpx-test"}
}

// span returns the one span named name, failing the test without it.
func (r *otlpReceiver) span(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var found []*tracepb.Span
	var names []string
	for _, s := range r.spans {
		names = append(names, s.Name)
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q; the receiver got %q", len(found), name, names)
	}
	return found[0]
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// The client's trace context, as a W3C traceparent.
const (
	clientTraceID = "0af7651916cd43dd8448eb211c80319c"
	clientSpanID  = "b7ad6b7169203331"
	clientParent  = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// metaCall is a tools/call of name carrying the client's traceparent.
func metaCall(id int, name string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"traceparent":%q}}}`+"\n",
		id, name, clientParent)
}

// receivedMeta is the _meta the fixture's meta tool says its call
// carried, from a tools/call answer.
func receivedMeta(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var resp struct {
		Result struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(line, &resp); err != nil || len(resp.Result.Content) != 1 {
		t.Fatalf("meta tool's answer: %v: %s", err, line)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(resp.Result.Content[0].Text), &meta); err != nil {
		t.Fatalf("meta tool's text: %v", err)
	}
	return meta
}

// checkLinked asserts the chain client -> mcpx's request span -> its
// upstream call span -> the traceparent the fixture received.
func checkLinked(t *testing.T, rcv *otlpReceiver, requestSpan, callSpan string, meta map[string]any) {
	t.Helper()
	req, call := rcv.span(t, requestSpan), rcv.span(t, callSpan)
	id := func(b []byte) string { return hex.EncodeToString(b) }
	if id(req.TraceId) != clientTraceID || id(call.TraceId) != clientTraceID {
		t.Errorf("trace ids %s, %s; want the client's %s continued", id(req.TraceId), id(call.TraceId), clientTraceID)
	}
	if id(req.ParentSpanId) != clientSpanID {
		t.Errorf("request span's parent %s; want the client's span %s", id(req.ParentSpanId), clientSpanID)
	}
	if !bytes.Equal(call.ParentSpanId, req.SpanId) {
		t.Errorf("upstream call span's parent %s; want the request span %s", id(call.ParentSpanId), id(req.SpanId))
	}
	if req.Kind != tracepb.Span_SPAN_KIND_SERVER || call.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("span kinds %v, %v; want server, client", req.Kind, call.Kind)
	}
	if got := spanAttr(call, "mcpx.server"); got != "fx" {
		t.Errorf("call span's mcpx.server = %q", got)
	}
	if got := spanAttr(call, "mcpx.outcome"); got != "ok" {
		t.Errorf("call span's mcpx.outcome = %q", got)
	}
	want := "00-" + clientTraceID + "-" + id(call.SpanId) + "-01"
	if meta["traceparent"] != want {
		t.Errorf("the upstream received traceparent %v; want %s (the call span's)", meta["traceparent"], want)
	}
}

// TestTraceStdio: mcpx serve --stdio with OTEL_EXPORTER_OTLP_ENDPOINT
// set exports, on exit, a span for the client's tools/call that continues
// the client's traceparent and a child span for the upstream call, whose
// context the upstream receives in params._meta; directly and through the
// proxy tool. Its metrics reach the receiver too.
func TestTraceStdio(t *testing.T) {
	rcv := newOTLPReceiver(t)
	cfg := writeConfig(t, map[string]any{"expose": "both", "servers": map[string]any{"fx": fx("--meta-tool")}})
	cmd := mcpxCommand("serve", "--stdio", "--config", cfg)
	cmd.Env = append(cmd.Env, rcv.env()...)
	c := stdioConn(t, cmd)
	c.send(t, metaCall(1, "fx_meta"))
	_, line := c.next(t)
	direct := receivedMeta(t, line)
	c.close() // mcpx exits, flushing its spans
	checkLinked(t, rcv, "tools/call fx_meta", "tools/call meta", direct)

	rcv = newOTLPReceiver(t)
	cmd = mcpxCommand("serve", "--stdio", "--config", cfg)
	cmd.Env = append(cmd.Env, rcv.env()...)
	c = stdioConn(t, cmd)
	c.send(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"proxy","arguments":{"action":"call","type":"tool","path":"fx_meta","args":{}},"_meta":{"traceparent":%q}}}`+"\n", clientParent))
	_, line = c.next(t)
	proxied := receivedMeta(t, line)
	c.close()
	checkLinked(t, rcv, "tools/call proxy", "tools/call meta", proxied)
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	for _, m := range []string{"mcpx.calls", "mcp.client.operation.duration", "mcp.server.operation.duration", "mcpx.upstreams"} {
		if !rcv.metrics[m] {
			t.Errorf("metric %s did not reach the receiver (got %v)", m, rcv.metrics)
		}
	}
}

// TestTraceHTTPHeader: over streamable HTTP a client may send its trace
// context as the traceparent header instead; the trace is continued the
// same way.
func TestTraceHTTPHeader(t *testing.T) {
	rcv := newOTLPReceiver(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx("--meta-tool")}})
	srv := startHTTP(t, cfg, rcv.env())
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	_, h, _ := do(t, "POST", srv.url+"/mcp", hdr, initBody)
	hdr["Mcp-Session-Id"] = h.Get("Mcp-Session-Id")
	hdr["Accept"] = "application/json"
	hdr["Traceparent"] = clientParent
	code, _, body := do(t, "POST", srv.url+"/mcp", hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx_meta","arguments":{}}}`)
	if code != 200 {
		t.Fatalf("tools/call: %d %s", code, body)
	}
	meta := receivedMeta(t, []byte(body))
	stopServe(t, srv)
	checkLinked(t, rcv, "tools/call fx_meta", "tools/call meta", meta)
}

// stopServe ends a serve --http with SIGTERM and waits for it, so that
// what it exports on exit is in.
func stopServe(t *testing.T, srv *httpServe) {
	t.Helper()
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if !waitExit(srv.cmd, 15*time.Second) {
		t.Fatal("mcpx serve --http did not exit on SIGTERM")
	}
}

// scrape fetches /metrics and parses it as Prometheus text.
func scrape(t *testing.T, url string, header map[string]string) map[string]*dto.MetricFamily {
	t.Helper()
	code, h, body := do(t, "GET", url+"/metrics", header, "")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/metrics Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse as Prometheus text: %v\n%s", err, body)
	}
	return fams
}

// sample is the value of the one series of fam whose labels include
// want; -1 when there is none.
func sample(fam *dto.MetricFamily, want map[string]string) float64 {
	if fam == nil {
		return -1
	}
	for _, m := range fam.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsEndpoint: serve --http serves /metrics in Prometheus text
// format with no OTEL variable set, counting calls by server, tool and
// outcome, behind the same guards as /mcp.
func TestMetricsEndpoint(t *testing.T) {
	const token = "metrics-token-123456"
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx()}})
	srv := startHTTP(t, cfg, []string{"MCPX_HTTP_TOKEN=" + token})
	auth := map[string]string{"Authorization": "Bearer " + token}
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json", "Authorization": "Bearer " + token}
	_, h, _ := do(t, "POST", srv.url+"/mcp", hdr, initBody)
	hdr["Mcp-Session-Id"] = h.Get("Mcp-Session-Id")
	calls := []string{
		`{"name":"fx_echo","arguments":{"message":"a"}}`,
		`{"name":"fx_echo","arguments":{"message":"b"}}`,
		`{"name":"fx_fail","arguments":{}}`,
	}
	for i, params := range calls {
		if code, _, body := do(t, "POST", srv.url+"/mcp", hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+2, params)); code != 200 {
			t.Fatalf("call %d: %d %s", i, code, body)
		}
	}
	fams := scrape(t, srv.url, auth)
	for _, c := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"mcpx_calls_total", map[string]string{"mcpx_server": "fx", "gen_ai_tool_name": "echo", "mcpx_outcome": "ok"}, 2},
		{"mcpx_calls_total", map[string]string{"mcpx_server": "fx", "gen_ai_tool_name": "fail", "mcpx_outcome": "isError"}, 1},
		{"mcp_client_operation_duration_seconds", map[string]string{"mcpx_server": "fx", "gen_ai_tool_name": "echo"}, 2},
		{"mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": "fx_echo", "mcpx_outcome": "ok"}, 2},
		{"mcpx_calls_inflight", map[string]string{"mcpx_server": "fx", "mcp_method_name": "tools/call"}, 0},
		{"mcpx_upstreams", map[string]string{"mcpx_state": "ready"}, 1},
		{"mcpx_upstreams", map[string]string{"mcpx_state": "failed"}, 0},
		{"mcpx_upstream_restarts_total", map[string]string{"mcpx_server": "fx"}, 0},
		{"mcpx_tools_withheld", map[string]string{"mcpx_server": "fx"}, 0},
	} {
		if got := sample(fams[c.metric], c.labels); got != c.want {
			t.Errorf("%s%v = %v; want %v", c.metric, c.labels, got, c.want)
		}
	}

	// The guards of /mcp: a token, and an allowed Host.
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", nil, 401},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"rebinding Host", map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example"}, 403},
	} {
		if code, _, _ := do(t, "GET", srv.url+"/metrics", c.header, ""); code != c.want {
			t.Errorf("/metrics, %s: %d; want %d", c.name, code, c.want)
		}
	}
}

// TestTraceCompletion: completion/complete takes the path every request
// takes: a span for the client's request, continuing its traceparent, and
// a child span for the upstream's, which the upstream hears of.
func TestTraceCompletion(t *testing.T) {
	rcv := newOTLPReceiver(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx()}})
	cmd := mcpxCommand("serve", "--stdio", "--config", cfg)
	cmd.Env = append(cmd.Env, rcv.env()...)
	c := stdioConn(t, cmd)
	c.send(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"fx_greet"},"argument":{"name":"style","value":"f"},"_meta":{"traceparent":%q}}}`+"\n", clientParent))
	_, line := c.next(t)
	if !bytes.Contains(line, []byte(`"values":["formal","friendly","funny"]`)) {
		t.Fatalf("completion/complete: %s", line)
	}
	c.close()
	var req, call *tracepb.Span
	var names []string
	rcv.mu.Lock()
	for _, s := range rcv.spans {
		names = append(names, s.Name)
		switch {
		case s.Kind == tracepb.Span_SPAN_KIND_SERVER && strings.HasPrefix(s.Name, "completion/complete"):
			req = s
		case s.Kind == tracepb.Span_SPAN_KIND_CLIENT && strings.HasPrefix(s.Name, "completion/complete"):
			call = s
		}
	}
	rcv.mu.Unlock()
	if req == nil || call == nil {
		t.Fatalf("spans %q: want a server and a client span of completion/complete", names)
	}
	if hex.EncodeToString(req.TraceId) != clientTraceID || !bytes.Equal(call.ParentSpanId, req.SpanId) {
		t.Errorf("completion spans not linked: request %x (trace %x), upstream call's parent %x", req.SpanId, req.TraceId, call.ParentSpanId)
	}
	if got := spanAttr(call, "mcpx.server"); got != "fx" {
		t.Errorf("upstream span's mcpx.server = %q, want fx", got)
	}
}

// TestTraceModernHTTP: a request of revision 2026-07-28 over HTTP is
// recorded as a legacy session's is: a server span continuing the
// client's traceparent, the upstream call's span under it, and the
// server duration metric (which only this request can have fed).
func TestTraceModernHTTP(t *testing.T) {
	rcv := newOTLPReceiver(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx("--meta-tool")}})
	srv := startHTTP(t, cfg, rcv.env())
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"` + clientParent + `"}`
	r := post(t, srv.url+"/mcp", "tools/call", "fx_meta", `{"name":"fx_meta","arguments":{},"_meta":`+meta+`}`, nil)
	if r.Error != nil || r.Result == nil {
		t.Fatalf("modern tools/call: %+v", r)
	}
	line, _ := json.Marshal(map[string]any{"result": r.Result})
	received := receivedMeta(t, line)
	stopServe(t, srv)
	checkLinked(t, rcv, "tools/call fx_meta", "tools/call meta", received)
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if !rcv.metrics["mcp.server.operation.duration"] {
		t.Errorf("no mcp.server.operation.duration for a modern request (got %v)", rcv.metrics)
	}
}
