//go:build !linux

package execpages

// Drop does nothing here: it reads Linux's /proc/self/smaps.
func Drop() (int64, error) { return 0, nil }
