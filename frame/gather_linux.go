package frame

import "golang.org/x/sys/unix"

// mapLine returns an empty slice over an anonymous private mapping of n
// bytes, or nil when there is none (the blocks then hold the line). The
// mapping is memory the Go heap does not see: its pages are given only
// as they are written, and the collector's pacing is not thrown by a
// buffer the size of the limit.
func mapLine(n int64) []byte {
	if n <= 0 || n > maxMapped {
		return nil
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return b[:0]
}

// maxMapped is the largest mapping asked for; a larger limit gathers in
// blocks.
const maxMapped = 1 << 30

// copyStep is how much of a mapped line is copied out before its pages go
// back to the system, so that the line and its copy are not both whole
// in memory at once.
const copyStep = 1 << 20

// copyOut appends the mapped line m to dst, handing each copied step of
// m's pages back to the system as it goes.
func copyOut(dst, m []byte) []byte {
	for at := 0; at < len(m); at += copyStep {
		end := min(at+copyStep, len(m))
		dst = append(dst, m[at:end]...)
		if end-at == copyStep {
			_ = unix.Madvise(m[at:end], unix.MADV_DONTNEED)
		}
	}
	return dst
}

// unmapLine gives the mapping of m back.
func unmapLine(m []byte) {
	_ = unix.Munmap(m[:cap(m)])
}
