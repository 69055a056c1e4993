package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// maxSets bounds the attribute sets (and span names) kept: past it one
// is built per use, as the SDK would.
const maxSets = 4096

// setKey names one metric series: the labels a call's metrics carry.
type setKey struct {
	server, method string
	target         attribute.KeyValue // gen_ai.tool.name or gen_ai.prompt.name; invalid: none
	outcome        Outcome            // "": the in-flight series, which has none
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

// names keeps span names, "tools/call echo": a method and its target,
// few of each, joined once rather than per span.
type names struct {
	mu sync.RWMutex
	m  map[[2]string]string
}

func (n *names) get(method, target string) string {
	if target == "" {
		return method
	}
	k := [2]string{method, target}
	n.mu.RLock()
	name, ok := n.m[k]
	n.mu.RUnlock()
	if ok {
		return name
	}
	name = method + " " + target
	n.mu.Lock()
	if n.m == nil {
		n.m = map[[2]string]string{}
	}
	if len(n.m) < maxSets {
		n.m[k] = name
	}
	n.mu.Unlock()
	return name
}
