// Package editdist measures how far apart two names are, for the "did you
// mean" suggestions of the config (unknown keys) and of the catalog
// (unknown tools, prompts and resources), which must agree.
package editdist

// Distance is the edit distance between a and b in runes: the fewest
// insertions, deletions, substitutions and swaps of two neighbouring
// runes that turn one into the other (the optimal string alignment
// distance). A swap counts once because it is the commonest typo
// ("reanme" for "rename").
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1) // row i-2, for swaps
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
