// Package nozero allocates byte slices that are not zeroed first.
//
// make writes zeroes over every page of a slice at once: for a buffer of
// tens of megabytes about to be written whole (a long line copied out of
// a reader, a text decoded), that puts every page in memory up front,
// next to the source it is filled from. Memory that is not zeroed stays
// untouched until it is written, so the buffer grows in memory only as
// its bytes arrive, and the runtime can hand back the source's pages
// meanwhile.
//
//	buf := nozero.Make(n) // len 0, cap n
//	buf = append(buf, src...)
package nozero

import (
	"strings"
	"unsafe"
)

// Make returns a slice of length 0 and capacity n whose memory is not
// zeroed: only what is appended may be read. A strings.Builder grows
// without zeroing (the standard library's only way to ask for it); its
// memory is used as the slice and never as the builder's string.
func Make(n int) []byte {
	if n <= 0 {
		return nil
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0) // so that the string has the builder's memory
	return unsafe.Slice(unsafe.StringData(b.String()), n)[:0]
}
