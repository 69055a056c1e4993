package frame

import (
	"runtime/debug"

	"github.com/mcpx/mcpx/internal/nozero"
)

// gather holds a long line while it is read: in an anonymous mapping of
// the limit's size where the system has one (gather_linux.go), whose
// pages cost memory only once written and go back to the system as the
// line is copied out; else in blocks of the Go heap. Either way the line
// is copied out once, into memory of exactly its length, so that growing
// never copies it and nothing the size of the line outlives it but the
// line itself.
type gather struct {
	mapped []byte   // the mapping, its length the bytes in it; nil without one
	blocks [][]byte // without a mapping: the bytes, a block after another
	n      int      // bytes gathered
}

// collectOver is the size at which a line being gathered has the Go
// runtime collect garbage and hand what is free back to the system
// (debug.FreeOSMemory), once per line. serve runs the collector at
// GOGC=400, under which the last large answers, long garbage, stay in
// memory until the heap is five times what was live: a line this large
// would pile up on them. So each large line costs its own size and little
// more, however many came before it. It costs one collection per such
// line, little beside moving 8 MiB through mcpx and the client parsing it.
const collectOver = 8 << 20

// Blocks grow from minBlock to maxBlock: a line just over ShortLine
// wastes little, and a huge one is not many blocks.
const (
	minBlock = 64 << 10
	maxBlock = 1 << 20
)

// start begins a line of at most limit bytes (and its newline); limit <=
// 0 means no limit.
func (g *gather) start(limit int64) {
	g.n = 0
	if limit > 0 {
		g.mapped = mapLine(limit + 1)
	}
}

// write adds p to the line. With a mapping, p must fit the limit given
// to start (the Reader checks before it writes). Past collectOver, the
// garbage of earlier lines goes first.
func (g *gather) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if g.n < collectOver && g.n+len(p) >= collectOver {
		debug.FreeOSMemory()
	}
	g.n += len(p)
	if g.mapped != nil {
		g.mapped = append(g.mapped, p...) // within its capacity: no growth
		return
	}
	for len(p) > 0 {
		last := len(g.blocks) - 1
		if last < 0 || len(g.blocks[last]) == cap(g.blocks[last]) {
			g.blocks = append(g.blocks, make([]byte, 0, min(max(g.n, minBlock), maxBlock)))
			last++
		}
		b := g.blocks[last]
		k := copy(b[len(b):cap(b)], p)
		g.blocks[last], p = b[:len(b)+k], p[k:]
	}
}

// feed gives the bytes gathered to sk, and lets them go: the line is over
// the limit, and only the skim goes on.
func (g *gather) feed(sk *skim) {
	if g.mapped != nil {
		sk.feed(g.mapped)
	}
	for _, b := range g.blocks {
		sk.feed(b)
	}
	g.release()
}

// take returns the line in memory of its own, exactly its length, and
// lets go of the gathered bytes. The memory is not zeroed first
// (nozero): make would write zeroes over every page of the line at once,
// and with the mapping still whole in memory the line would then cost
// twice its size for a moment; written a step at a time, each step's
// pages of the mapping go back as the line's are taken.
func (g *gather) take() []byte {
	line := nozero.Make(g.n)
	if g.mapped != nil {
		line = copyOut(line, g.mapped)
	}
	for _, p := range g.blocks {
		line = append(line, p...)
	}
	g.release()
	return line
}

// release lets go of what was gathered, if anything.
func (g *gather) release() {
	if g.mapped != nil {
		unmapLine(g.mapped)
		g.mapped = nil
	}
	clear(g.blocks)
	g.blocks = g.blocks[:0]
	g.n = 0
}
