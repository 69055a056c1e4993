package proxytool

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/internal/editdist"
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
			d := editdist.Distance(want, have)
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
