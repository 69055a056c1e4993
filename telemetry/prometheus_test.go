package telemetry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// TestPrometheusAsTheOfficialExporter: /metrics as mcpx writes it parses
// into the same families, series and values as OpenTelemetry's
// Prometheus exporter, set up as mcpx set it up before (a registry of
// its own, no scope labels), gives for the same measurements: mcpx's
// instruments, and names that need cleaning.
func TestPrometheusAsTheOfficialExporter(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	official, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		t.Fatal(err)
	}
	ours := sdkmetric.NewManualReader()
	res := resource.NewSchemaless(attribute.String("service.name", "mcpx"), attribute.String("service.version", "1.0"))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(official), sdkmetric.WithReader(ours), sdkmetric.WithResource(res))
	defer mp.Shutdown(ctx)

	tel, err := New(nil, mp, Gauges{
		States:   func() map[string]int { return map[string]int{"ready": 2, "failed": 0} },
		Restarts: func() map[string]int { return map[string]int{"fx": 1, "b.c": 0} },
		Withheld: func() map[string]int { return map[string]int{"fx": 3} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	for i, tool := range []string{"echo", "echo", "fail"} {
		ctx, r := tel.StartRequest(ctx, "tools/call", []byte(`{"name":"fx_`+tool+`"}`), "s1", []byte{byte('1' + i)})
		_, c := tel.StartCall(ctx, "fx", "tools/call", []byte(`{"name":"`+tool+`"}`))
		c.End([]byte(`{"content":[]}`), nil, 0)
		r.End(OutcomeOK, 0, "")
	}
	m := mp.Meter("other", metric.WithInstrumentationVersion("2"))
	odd, _ := m.Float64Counter("odd name.with-chars", metric.WithUnit("By/s"), metric.WithDescription("Bytes.\nA second line \\ too."))
	odd.Add(ctx, 1.5, metric.WithAttributes(attribute.String("a.b", `say "hi"`), attribute.String("a-b", "x"), attribute.Int("9lives", 9)))
	ratio, _ := m.Float64Gauge("load", metric.WithUnit("1"))
	ratio.Record(ctx, 0.25)
	total, _ := m.Int64Counter("requests_total", metric.WithUnit("{request}"))
	total.Add(ctx, 4)

	want := scrapeFamilies(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	got := scrapeFamilies(t, promHandler{reader: ours})
	if len(got) == 0 {
		t.Fatal("no metrics")
	}
	var names []string
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w, g := want[name], got[name]
		if g == nil {
			t.Errorf("no family %s", name)
			continue
		}
		if w.GetType() != g.GetType() || w.GetHelp() != g.GetHelp() {
			t.Errorf("%s: type %v help %q; want %v %q", name, g.GetType(), g.GetHelp(), w.GetType(), w.GetHelp())
		}
		if ws, gs := promSeries(w), promSeries(g); ws != gs {
			t.Errorf("%s:\n got %s\nwant %s", name, gs, ws)
		}
	}
	for name := range got {
		if want[name] == nil {
			t.Errorf("extra family %s", name)
		}
	}
}

func scrapeFamilies(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not Prometheus text: %v\n%s", err, body)
	}
	return fams
}

// promSeries is a family's series as one comparable text.
func promSeries(f *dto.MetricFamily) string {
	var lines []string
	for _, m := range f.Metric {
		var labels []string
		for _, l := range m.Label {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(labels)
		line := strings.Join(labels, ",") + " "
		switch {
		case m.Counter != nil:
			line += model.SampleValue(m.Counter.GetValue()).String()
		case m.Gauge != nil:
			line += model.SampleValue(m.Gauge.GetValue()).String()
		case m.Histogram != nil:
			h := m.Histogram
			line += model.SampleValue(h.GetSampleSum()).String() + "/" + model.SampleValue(float64(h.GetSampleCount())).String()
			for _, b := range h.Bucket {
				line += " " + model.SampleValue(b.GetUpperBound()).String() + ":" + model.SampleValue(float64(b.GetCumulativeCount())).String()
			}
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}
