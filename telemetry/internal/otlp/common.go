package otlp

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// keyValues writes attributes as repeated KeyValue of field.
func (e *enc) keyValues(field int, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		e.keyValue(field, kv)
	}
}

// attrSet writes an attribute set as repeated KeyValue of field.
func (e *enc) attrSet(field int, s *attribute.Set) {
	for it := s.Iter(); it.Next(); {
		e.keyValue(field, it.Attribute())
	}
}

// keyValue writes one KeyValue {key = 1; value = 2}.
func (e *enc) keyValue(field int, kv attribute.KeyValue) {
	e.begin(field)
	e.string(1, string(kv.Key))
	e.begin(2)
	e.anyValue(kv.Value)
	e.end()
	e.end()
}

// anyValue writes the members of an AnyValue: its oneof, or nothing for
// an empty value.
func (e *enc) anyValue(v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		e.tag(2, wireVarint)
		if v.AsBool() {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
	case attribute.INT64:
		e.tag(3, wireVarint)
		e.b = appendVarint(e.b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		e.fixed64Always(4, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		e.stringAlways(1, v.AsString())
	case attribute.BYTESLICE:
		e.tag(7, wireBytes)
		p := v.AsByteSlice()
		e.b = appendVarint(e.b, uint64(len(p)))
		e.b = append(e.b, p...)
	case attribute.BOOLSLICE:
		e.array(len(v.AsBoolSlice()), func(i int) { e.anyValue(attribute.BoolValue(v.AsBoolSlice()[i])) })
	case attribute.INT64SLICE:
		vs := v.AsInt64Slice()
		e.array(len(vs), func(i int) { e.anyValue(attribute.Int64Value(vs[i])) })
	case attribute.FLOAT64SLICE:
		vs := v.AsFloat64Slice()
		e.array(len(vs), func(i int) { e.anyValue(attribute.Float64Value(vs[i])) })
	case attribute.STRINGSLICE:
		vs := v.AsStringSlice()
		e.array(len(vs), func(i int) { e.anyValue(attribute.StringValue(vs[i])) })
	case attribute.SLICE:
		vs := v.AsSlice()
		e.array(len(vs), func(i int) { e.anyValue(vs[i]) })
	case attribute.MAP:
		e.begin(6) // kvlist_value: KeyValueList {values = 1}
		e.keyValues(1, v.AsMap())
		e.end()
	case attribute.EMPTY:
	default:
		e.stringAlways(1, "INVALID")
	}
}

// array writes an array_value (5): ArrayValue {values = 1} of n values,
// each written by value.
func (e *enc) array(n int, value func(i int)) {
	e.begin(5)
	for i := range n {
		e.begin(1)
		value(i)
		e.end()
	}
	e.end()
}

// resource writes a Resource {attributes = 1} as field.
func (e *enc) resource(field int, r *resource.Resource) {
	e.begin(field)
	if r != nil {
		for it := r.Iter(); it.Next(); {
			e.keyValue(1, it.Attribute())
		}
	}
	e.end()
}

// scope writes an InstrumentationScope {name = 1; version = 2;
// attributes = 3} as field.
func (e *enc) scope(field int, s instrumentation.Scope) {
	e.begin(field)
	e.string(1, s.Name)
	e.string(2, s.Version)
	e.attrSet(3, &s.Attributes)
	e.end()
}
