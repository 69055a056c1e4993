package telemetry

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// promHandler serves the metrics a reader collects in Prometheus text
// format (0.0.4), named as OpenTelemetry's Prometheus exporter names
// them with its defaults and no scope labels: dots and other characters
// as underscores, the unit's word added (seconds, bytes; none for a unit
// in braces), _total on counters, a target_info series of the resource.
// It is mcpx's own rather than that exporter's, which brings the
// Prometheus client and protobuf into every process.
type promHandler struct {
	reader *sdkmetric.ManualReader
	log    *slog.Logger
}

func (h promHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(r.Context(), &rm); err != nil {
		h.log.Warn("metrics not collected", "err", err)
		http.Error(w, "metrics not collected", http.StatusInternalServerError)
		return
	}
	var b bytes.Buffer
	writeProm(&b, &rm)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		gz.Write(b.Bytes())
		gz.Close()
		return
	}
	w.Write(b.Bytes())
}

// promFamily is the series of one metric name.
type promFamily struct {
	name, help, typ string
	lines           []promLine
}

// promLine is one sample line; key orders the lines of a family as the
// Prometheus client does (by label values, then the samples in order).
type promLine struct {
	key  string
	text string
}

// writeProm writes rm in Prometheus text format, families by name.
func writeProm(b *bytes.Buffer, rm *metricdata.ResourceMetrics) {
	families := map[string]*promFamily{}
	family := func(name, help, typ string) *promFamily {
		f := families[name]
		if f == nil {
			f = &promFamily{name: name, help: help, typ: typ}
			families[name] = f
		}
		if f.typ != typ {
			return nil // a type conflict: the first keeps the name
		}
		return f
	}
	if rm.Resource != nil {
		if f := family("target_info", "Target metadata", "gauge"); f != nil {
			f.add(promLabels(resourceSet(rm.Resource), "", ""), "target_info", 1, 0)
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				promSum(family, m, d)
			case metricdata.Sum[float64]:
				promSum(family, m, d)
			case metricdata.Gauge[int64]:
				promGauge(family, m, d.DataPoints)
			case metricdata.Gauge[float64]:
				promGauge(family, m, d.DataPoints)
			case metricdata.Histogram[int64]:
				promHistogram(family, m, d)
			case metricdata.Histogram[float64]:
				promHistogram(family, m, d)
			}
		}
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := families[name]
		if f.help != "" {
			fmt.Fprintf(b, "# HELP %s %s\n", name, escapeHelp(f.help))
		}
		fmt.Fprintf(b, "# TYPE %s %s\n", name, f.typ)
		slices.SortStableFunc(f.lines, func(x, y promLine) int { return strings.Compare(x.key, y.key) })
		for _, l := range f.lines {
			b.WriteString(l.text)
		}
	}
}

func resourceSet(r *resource.Resource) *attribute.Set { return r.Set() }

func promSum[N int64 | float64](family func(string, string, string) *promFamily, m metricdata.Metrics, s metricdata.Sum[N]) {
	typ := "gauge"
	if s.IsMonotonic {
		typ = "counter"
	}
	name := promName(m.Name, m.Unit, typ)
	f := family(name, m.Description, typ)
	if f == nil {
		return
	}
	for _, p := range s.DataPoints {
		f.add(promLabels(&p.Attributes, "", ""), name, float64(p.Value), 0)
	}
}

func promGauge[N int64 | float64](family func(string, string, string) *promFamily, m metricdata.Metrics, pts []metricdata.DataPoint[N]) {
	name := promName(m.Name, m.Unit, "gauge")
	f := family(name, m.Description, "gauge")
	if f == nil {
		return
	}
	for _, p := range pts {
		f.add(promLabels(&p.Attributes, "", ""), name, float64(p.Value), 0)
	}
}

func promHistogram[N int64 | float64](family func(string, string, string) *promFamily, m metricdata.Metrics, h metricdata.Histogram[N]) {
	name := promName(m.Name, m.Unit, "histogram")
	f := family(name, m.Description, "histogram")
	if f == nil {
		return
	}
	for _, p := range h.DataPoints {
		var cum uint64
		for i, bound := range p.Bounds {
			cum += p.BucketCounts[i]
			f.add(promLabels(&p.Attributes, "le", formatFloat(bound)), name+"_bucket", float64(cum), i)
		}
		f.add(promLabels(&p.Attributes, "le", "+Inf"), name+"_bucket", float64(p.Count), len(p.Bounds))
		f.add(promLabels(&p.Attributes, "", ""), name+"_sum", float64(p.Sum), len(p.Bounds)+1)
		f.add(promLabels(&p.Attributes, "", ""), name+"_count", float64(p.Count), len(p.Bounds)+2)
	}
}

// add adds a sample line: the series' labels (keyed by their values,
// without le), the sample's name and value; n orders the samples of one
// series.
func (f *promFamily) add(labels promLabelSet, name string, v float64, n int) {
	var t strings.Builder
	t.WriteString(name)
	if len(labels.text) > 0 {
		t.WriteString("{" + labels.text + "}")
	}
	t.WriteString(" " + formatFloat(v) + "\n")
	f.lines = append(f.lines, promLine{key: labels.key + "\x00" + fmt.Sprintf("%08d", n), text: t.String()})
}

// promLabelSet is a series' labels as written, and as the Prometheus
// client sorts series (their values, in label name order).
type promLabelSet struct{ text, key string }

// promLabels are an attribute set's labels, names made valid (values of
// attributes whose names become the same joined, sorted, with ";"),
// sorted by name, with extra (le) last.
func promLabels(s *attribute.Set, extraName, extraValue string) promLabelSet {
	byName := map[string][]string{}
	for it := s.Iter(); it.Next(); {
		kv := it.Attribute()
		name := promLabelName(string(kv.Key))
		if name == "" {
			continue
		}
		byName[name] = append(byName[name], kv.Value.String())
	}
	names := make([]string, 0, len(byName)+1)
	for n := range byName {
		names = append(names, n)
	}
	if extraName != "" {
		names = append(names, extraName)
		byName[extraName] = []string{extraValue}
	}
	slices.Sort(names)
	var text, key strings.Builder
	for i, n := range names {
		vs := byName[n]
		slices.Sort(vs)
		v := strings.Join(vs, ";")
		if i > 0 {
			text.WriteByte(',')
		}
		text.WriteString(n + `="` + escapeLabel(v) + `"`)
		if n != "le" {
			key.WriteString(v + "\x00")
		}
	}
	return promLabelSet{text: text.String(), key: key.String()}
}

// promLabelName is an attribute name as a Prometheus label: each run of
// characters other than letters and digits one underscore, "key_" before
// a leading digit, a name of __x__ kept reserved; "" when nothing is left.
func promLabelName(name string) string {
	reserved := len(name) >= 4 && strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__")
	if reserved {
		name = name[2 : len(name)-2]
	}
	var b strings.Builder
	under := false
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	out := b.String()
	if reserved {
		out = "__" + out + "__"
	}
	if out == "" || strings.Trim(out, "_") == "" {
		return ""
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "key_" + out
	}
	return out
}

// Units as the Prometheus exporter spells them in names.
var promUnits = map[string]string{
	"d": "days", "h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
	"By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes", "TiBy": "tibibytes",
	"KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes", "TBy": "terabytes",
	"m": "meters", "V": "volts", "A": "amperes", "J": "joules", "W": "watts", "g": "grams",
	"Cel": "celsius", "Hz": "hertz", "1": "", "%": "percent",
}

var promPerUnits = map[string]string{"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year"}

// promName is a metric's Prometheus name: its name's runs of letters,
// digits and colons joined with underscores, the unit's words (a unit in
// braces has none), _total on a counter, _ratio on a gauge of unit 1.
func promName(name, unit, typ string) string {
	tokens := strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':')
	})
	main, per, _ := strings.Cut(unit, "/")
	main, per = strings.TrimSpace(main), strings.TrimSpace(per)
	var mainWord, perWord string
	if main != "" && !strings.ContainsAny(main, "{}") {
		mainWord = cleanUnit(orSelf(promUnits, main))
	}
	if per != "" && !strings.ContainsAny(per, "{}") {
		perWord = cleanUnit("per_" + orSelf(promPerUnits, per))
	}
	if slices.Contains(tokens, mainWord) {
		mainWord = ""
	}
	if perWord == "per_" {
		perWord = ""
	} else if perWord = strings.TrimSuffix(perWord, "_"); slices.Contains(tokens, perWord) {
		perWord = ""
	}
	if perWord != "" {
		mainWord = strings.TrimSuffix(mainWord, "_")
	}
	if mainWord != "" {
		tokens = append(tokens, mainWord)
	}
	if perWord != "" {
		tokens = append(tokens, perWord)
	}
	drop := func(w string) []string { return slices.DeleteFunc(tokens, func(t string) bool { return t == w }) }
	if typ == "counter" {
		tokens = append(drop("total"), "total")
	}
	if unit == "1" && typ == "gauge" {
		tokens = append(drop("ratio"), "ratio")
	}
	out := strings.Join(tokens, "_")
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

func orSelf(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return k
}

// cleanUnit makes a unit's word valid: other characters as underscores,
// no two in a row, none leading.
func cleanUnit(u string) string {
	var b strings.Builder
	under := false
	for _, r := range u {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':') {
			r = '_'
		}
		if r == '_' && under {
			continue
		}
		under = r == '_'
		b.WriteRune(r)
	}
	return strings.TrimPrefix(b.String(), "_")
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}
