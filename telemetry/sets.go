package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
)

// maxSets bounds the attribute sets kept: past it a set is built per
// use, as the SDK would.
const maxSets = 4096

// setKey names one metric series: the labels a call's metrics carry.
type setKey struct {
	server, method string
	target         attribute.KeyValue // gen_ai.tool.name or gen_ai.prompt.name; invalid: none
	outcome        Outcome            // "": the in-flight series, which has none
}

// sets keeps the attribute set of each series: building one (sorting,
// hashing, copying) was a third of what the metrics cost a call, and a
// catalog has few series.
type sets struct {
	mu sync.RWMutex
	m  map[setKey]attribute.Set
}

func (s *sets) get(k setKey) attribute.Set {
	s.mu.RLock()
	set, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return set
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
	set = attribute.NewSet(kvs...)
	s.mu.Lock()
	if s.m == nil {
		s.m = map[setKey]attribute.Set{}
	}
	if len(s.m) < maxSets {
		s.m[k] = set
	}
	s.mu.Unlock()
	return set
}
