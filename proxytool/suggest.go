package proxytool

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

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
			// The edits must be few next to what the names do not share
			// at their start: a server's prefix in both is no likeness.
			if d > max(2, len([]rune(want[commonPrefix(want, have):]))/3) {
				continue
			}
			if best < 0 || d < best {
				best = d
			}
		}
		if best >= 0 {
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

// commonPrefix returns the length in bytes of the longest common prefix
// of a and b, at a rune boundary.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && n < len(a) && !utf8.RuneStart(a[n]) {
		n--
	}
	return n
}

// maxSuggested is how many names a "did you mean" offers.
const maxSuggested = 3

// suggest returns a sentence naming the capabilities a name that was not
// found may have meant: those whose names look like it (a typo, a part
// of the name, a prefix left out), else those the search ranks first
// for the name's words. "" when there are none.
func (p *Proxy) suggest(kind Kind, name string) string {
	items := p.c.Items(kind)
	if len(items) == 0 {
		return ""
	}
	near := Closest(items, name, maxSuggested)
	if len(near) == 0 {
		found, res := p.search(kind, name, nil)
		for _, h := range res.Hits[:min(maxSuggested, len(res.Hits))] {
			near = append(near, found[h.Doc])
		}
	}
	if len(near) == 0 {
		return fmt.Sprintf(`. Find the %s with {"action":"list","type":"%s","query":"what it does"}.`, kind, kind)
	}
	names := make([]string, len(near))
	for i, it := range near {
		names[i] = "'" + it.Name + "'"
	}
	return ". Did you mean " + orList(names) + "?"
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
