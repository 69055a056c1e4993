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

// sets keeps the attribute set of each series, as the option that
// passes it to an instrument: building one (sorting, hashing, copying)
// was a third of what the metrics cost a call, the option another
// allocation per measurement, and a catalog has few series.
type sets struct {
	mu sync.RWMutex
	m  map[setKey]metric.MeasurementOption
}

func (s *sets) get(k setKey) metric.MeasurementOption {
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
	opt = metric.WithAttributeSet(attribute.NewSet(kvs...))
	s.mu.Lock()
	if s.m == nil {
		s.m = map[setKey]metric.MeasurementOption{}
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
