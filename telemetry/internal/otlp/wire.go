package otlp

import (
	"encoding/binary"
	"math"
)

// Protobuf wire types.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

// enc appends a protobuf message, field by field. A nested message is
// written between begin and end, which puts its length before it.
type enc struct {
	b     []byte
	marks []int // where each open message's length goes
}

func (e *enc) tag(field, wire int) { e.b = binary.AppendUvarint(e.b, uint64(field)<<3|uint64(wire)) }

// uint writes a varint field; zero, proto3's default, is left out.
func (e *enc) uint(field int, v uint64) {
	if v == 0 {
		return
	}
	e.tag(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, v)
}

// int writes an int64 varint field (two's complement, as protobuf's
// int64 is).
func (e *enc) int(field int, v int64) { e.uint(field, uint64(v)) }

// sint writes a zigzag-encoded sint32 field.
func (e *enc) sint(field int, v int32) { e.uint(field, uint64(uint32(v<<1)^uint32(v>>31))) }

func (e *enc) bool(field int, v bool) {
	if v {
		e.uint(field, 1)
	}
}

func (e *enc) fixed64(field int, v uint64) {
	if v == 0 {
		return
	}
	e.tag(field, wire64)
	e.b = binary.LittleEndian.AppendUint64(e.b, v)
}

// fixed64Always writes a fixed64 field even when zero: a value of a
// oneof, or an optional field that is set.
func (e *enc) fixed64Always(field int, v uint64) {
	e.tag(field, wire64)
	e.b = binary.LittleEndian.AppendUint64(e.b, v)
}

func (e *enc) fixed32(field int, v uint32) {
	if v == 0 {
		return
	}
	e.tag(field, wire32)
	e.b = binary.LittleEndian.AppendUint32(e.b, v)
}

// double writes a double field that is set (a oneof's value or an
// optional field): zero included.
func (e *enc) double(field int, v float64) { e.fixed64Always(field, math.Float64bits(v)) }

func (e *enc) string(field int, s string) {
	if s == "" {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *enc) bytes(field int, p []byte) {
	if len(p) == 0 {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(p)))
	e.b = append(e.b, p...)
}

// stringAlways writes a string field even when empty: a oneof's value.
func (e *enc) stringAlways(field int, s string) {
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

// packedFixed64 writes a packed repeated fixed64 (or double) field.
func (e *enc) packedFixed64(field int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(8*len(vs)))
	for _, v := range vs {
		e.b = binary.LittleEndian.AppendUint64(e.b, v)
	}
}

// packedVarint writes a packed repeated uint64 field.
func (e *enc) packedVarint(field int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	e.begin(field)
	for _, v := range vs {
		e.b = binary.AppendUvarint(e.b, v)
	}
	e.end()
}

// begin opens a nested message (or packed field) of field; end closes
// it. An empty message is still written: it says the field is set.
func (e *enc) begin(field int) {
	e.tag(field, wireBytes)
	e.marks = append(e.marks, len(e.b))
	e.b = append(e.b, 0) // the length's first byte; end makes room for more
}

func (e *enc) end() {
	at := e.marks[len(e.marks)-1]
	e.marks = e.marks[:len(e.marks)-1]
	n := len(e.b) - at - 1
	var l [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(l[:], uint64(n))
	if k > 1 {
		e.b = append(e.b, l[1:k]...) // grow by what the length needs
		copy(e.b[at+k:], e.b[at+1:at+1+n])
	}
	copy(e.b[at:], l[:k])
}

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
