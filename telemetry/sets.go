package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcpx/mcpx/rawjson"
)

// maxSets bounds the attribute sets (and span names) kept: past it one
// is built per use, as the SDK would.
const maxSets = 4096

// setKey names one metric series: the labels a call's metrics carry.
type setKey struct {
	server, method string
	target         attribute.KeyValue // gen_ai.tool.name or gen_ai.prompt.name; invalid: none
	outcome        Outcome            // "": none
}

// series is one series' attribute set as the options that pass it to
// an instrument, ready to pass with ...: no allocation per measurement.
type series struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// sets keeps the attribute set of each series: building one (sorting,
// hashing, copying) was a third of what the metrics cost a call, the
// options another three allocations, and a catalog has few series.
type sets struct {
	mu sync.RWMutex
	m  map[setKey]series
}

func (s *sets) get(k setKey) series {
	s.mu.RLock()
	opt, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return opt
	}
	kvs := make([]attribute.KeyValue, 0, 4)
	if k.server != "" {
		kvs = append(kvs, AttrServer.String(k.server))
	}
	kvs = append(kvs, AttrMethod.String(k.method))
	if k.target.Valid() {
		kvs = append(kvs, k.target)
	}
	if k.outcome != "" {
		kvs = append(kvs, AttrOutcome.String(string(k.outcome)))
	}
	o := metric.WithAttributeSet(attribute.NewSet(kvs...))
	opt = series{add: []metric.AddOption{o}, record: []metric.RecordOption{o}}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[setKey]series{}
	}
	if len(s.m) < maxSets {
		s.m[k] = opt
	}
	s.mu.Unlock()
	return opt
}

// named is a tool's or prompt's name, and the span name it makes with
// its method.
type named struct{ target, span string }

// names keeps, per method, the names of the tools and prompts called by
// their raw JSON: decoding one, and joining it to the method, was an
// allocation each per span, and a catalog has few.
type names struct {
	mu sync.RWMutex
	m  map[string]map[string]named
	n  int
}

func (n *names) get(method string, raw []byte) named {
	if raw == nil {
		return named{span: method}
	}
	n.mu.RLock()
	v, ok := n.m[method][string(raw)]
	n.mu.RUnlock()
	if ok {
		return v
	}
	v = named{span: method}
	if s, _ := rawjson.String(raw); s != "" {
		v = named{target: s, span: method + " " + s}
	}
	n.mu.Lock()
	if n.m == nil {
		n.m = map[string]map[string]named{}
	}
	if n.n < maxSets {
		if n.m[method] == nil {
			n.m[method] = map[string]named{}
		}
		n.m[method][string(raw)] = v
		n.n++
	}
	n.mu.Unlock()
	return v
}
