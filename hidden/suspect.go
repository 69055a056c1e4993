package hidden

import "slices"

// Outlier reports whether a description of n bytes is far longer than
// its peers': four times their median and more than 2000 bytes, so that
// a server of short descriptions with one essay stands out.
func Outlier(n int, peers []int) bool {
	if n <= 2000 || len(peers) < 3 {
		return false
	}
	s := slices.Clone(peers)
	slices.Sort(s)
	return n > 4*s[len(s)/2]
}
