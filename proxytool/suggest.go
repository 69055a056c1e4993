package proxytool

import (
	"cmp"
	"slices"
	"strings"
)

// maxCompared bounds the length of a name compared: the name may come
// from a client, and the edit distance costs the product of two lengths.
const maxCompared = 256

// Closest returns up to n items whose exposed or original name, title, or
// (for a resource) name field looks like name, the closest first, for a
// "did you mean" after a name was not found. A name that contains the other (echo in everything_echo) counts
// as close; otherwise the edit distance must be small next to the name's
// length, so that nothing unrelated is offered. Ties go by exposed name.
func Closest(items []Item, name string, n int) []Item {
	want := strings.ToLower(name)
	if want == "" || n <= 0 || len(want) > maxCompared {
		return nil
	}
	limit := max(2, len([]rune(want))/3)
	type scored struct {
		item Item
		dist int
	}
	var found []scored
	for _, it := range items {
		best := -1
		haves := []string{it.Name, it.Original, it.Title}
		if it.Kind == KindResource {
			haves = append(haves, resourceName(it.JSON))
		}
		for _, have := range haves {
			have = strings.ToLower(have)
			if have == "" || len(have) > maxCompared {
				continue
			}
			d := editDistance(want, have)
			if strings.Contains(have, want) || strings.Contains(want, have) {
				// Containment beats any typo: the user typed part of it.
				d = min(d, 1)
			}
			if best < 0 || d < best {
				best = d
			}
		}
		if best >= 0 && best <= limit {
			found = append(found, scored{it, best})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), strings.Compare(a.item.Name, b.item.Name))
	})
	out := make([]Item, 0, min(n, len(found)))
	for _, s := range found[:min(n, len(found))] {
		out = append(out, s.item)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
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
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
