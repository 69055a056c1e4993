package telemetry

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// inflight counts the calls in flight per server and method in atomic
// counters that the metrics reader observes when it collects. An
// up-down counter's Add went through the SDK twice per call (attribute
// resolution, the series map, the exemplar filter): about a sixth of
// what the metrics cost a traced call in the served process, for a value
// read once a collection.
type inflight struct {
	mu       sync.RWMutex
	m        map[inflightKey]*inflightSeries
	overflow *inflightSeries // the calls of series past maxSets
}

type inflightKey struct{ server, method string }

// inflightSeries is one series' count and its attributes.
type inflightSeries struct {
	n   atomic.Int64
	opt metric.ObserveOption
}

// overflowAttr marks the series of calls past the bound, as the SDK
// marks measurements past its cardinality limit.
var overflowAttr = attribute.Bool("otel.metric.overflow", true)

// get returns the counter of server's calls of method.
func (f *inflight) get(server, method string) *inflightSeries {
	k := inflightKey{server, method}
	f.mu.RLock()
	s, ok := f.m[k]
	f.mu.RUnlock()
	if ok {
		return s
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.m[k]; ok {
		return s
	}
	if len(f.m) >= maxSets {
		if f.overflow == nil {
			f.overflow = &inflightSeries{opt: metric.WithAttributeSet(attribute.NewSet(overflowAttr))}
		}
		return f.overflow
	}
	if f.m == nil {
		f.m = map[inflightKey]*inflightSeries{}
	}
	s = &inflightSeries{opt: metric.WithAttributeSet(attribute.NewSet(AttrServer.String(server), AttrMethod.String(method)))}
	f.m[k] = s
	return s
}

// observe reports every series' count.
func (f *inflight) observe(o metric.Observer, inst metric.Int64Observable) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, s := range f.m {
		o.ObserveInt64(inst, s.n.Load(), s.opt)
	}
	if f.overflow != nil {
		o.ObserveInt64(inst, f.overflow.n.Load(), f.overflow.opt)
	}
}
