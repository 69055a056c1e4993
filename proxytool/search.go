package proxytool

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Scores of one query term against one item; an item's score is the sum
// over the terms. Each term counts once, at its best match.
const (
	scoreExact       = 100 // the exposed or original name is the term
	scorePrefix      = 60  // a name starts with the term
	scoreWord        = 45  // a word inside a name starts with the term
	scoreName        = 30  // a name contains the term
	scoreTitle       = 15  // the title contains the term
	scoreDescription = 5   // the description contains the term
	maxTerms         = 16  // terms past this are ignored
)

// Search returns the items that match query, best match first.
//
// The query is split into terms at white space and commas; matching ignores
// case. An item matches when any term occurs in its exposed name, original
// name, title or description; items matching no term are left out. Items
// rank by how well each term matches: the whole exposed or original name
// best, then a name that starts with the term, a word inside a name
// (after '_', '-', '.', '/', ':' or a lower-to-upper case change), anywhere
// in a name, the title, and last the description. Equal scores are ordered
// by exposed name, then by their order in items. A query with no terms
// keeps every item, in order. Search reads only the Item fields, never
// JSON, and does not modify items.
func Search(items []Item, query string) []Item {
	terms := searchTerms(query)
	if len(terms) == 0 {
		return slices.Clone(items)
	}
	hits := rank(items, terms, nil)
	out := make([]Item, len(hits))
	for i, h := range hits {
		out[i] = items[h.index]
	}
	return out
}

// hit is a matching item: its index in the searched slice and its score.
type hit struct {
	index int
	score int
}

// rank scores the items that keep allows (all when keep is nil) and
// returns those that match, best first.
func rank(items []Item, terms []term, keep func(*Item) bool) []hit {
	var hits []hit
	for i := range items {
		it := &items[i]
		if keep != nil && !keep(it) {
			continue
		}
		score := 0
		for _, t := range terms {
			score += t.score(it)
		}
		if score > 0 {
			hits = append(hits, hit{index: i, score: score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return strings.Compare(items[a.index].Name, items[b.index].Name)
	})
	return hits
}

// searchTerms splits a query into distinct terms.
func searchTerms(query string) []term {
	var terms []term
	for _, f := range strings.FieldsFunc(query, func(r rune) bool { return unicode.IsSpace(r) || r == ',' }) {
		t := newTerm(f)
		if slices.ContainsFunc(terms, func(u term) bool { return u.text == t.text }) {
			continue
		}
		terms = append(terms, t)
		if len(terms) == maxTerms {
			break
		}
	}
	return terms
}

// term is one search term, prepared for fast case-insensitive matching.
type term struct {
	text  string // lower case
	ascii bool
	// at is the index in text of its rarest byte, the anchor that
	// candidate matches are found by; lo and up are that byte in lower
	// and upper case. Only for ASCII terms.
	at     int
	lo, up byte
}

func newTerm(s string) term {
	t := term{text: strings.ToLower(s), ascii: true}
	if t.text == "" {
		return t
	}
	for i := 0; i < len(t.text); i++ {
		c := t.text[i]
		if c >= utf8.RuneSelf {
			t.ascii = false
			return t
		}
		if rarity(c) > rarity(t.text[t.at]) {
			t.at = i
		}
	}
	t.lo, t.up = t.text[t.at], t.text[t.at]
	if 'a' <= t.lo && t.lo <= 'z' {
		t.up = t.lo - 'a' + 'A'
	}
	return t
}

// rarity ranks how rare a lower-case ASCII byte is in English text: the
// higher, the fewer false candidates a search anchored on it meets.
func rarity(c byte) int {
	const commonFirst = " etaoinshrdlcumwfgypbvkjxqz"
	if i := strings.IndexByte(commonFirst, c); i >= 0 {
		return i
	}
	return 20 // digits and punctuation
}

// score scores the term against an item; 0 means no match.
func (t term) score(it *Item) int {
	if s := max(t.nameScore(it.Name), t.nameScore(it.Original)); s > 0 {
		return s
	}
	if t.index(it.Title, 0) >= 0 {
		return scoreTitle
	}
	if t.index(it.Description, 0) >= 0 {
		return scoreDescription
	}
	return 0
}

// nameScore scores the term against a name.
func (t term) nameScore(name string) int {
	if strings.EqualFold(name, t.text) {
		return scoreExact
	}
	i := t.index(name, 0)
	switch {
	case i < 0:
		return 0
	case i == 0:
		return scorePrefix
	}
	for ; i >= 0; i = t.index(name, i+1) {
		if wordStart(name, i) {
			return scoreWord
		}
	}
	return scoreName
}

// wordStart reports whether a word of s starts at byte i.
func wordStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	prev, cur := s[i-1], s[i]
	if !isAlnum(prev) {
		return true
	}
	return 'a' <= prev && prev <= 'z' && 'A' <= cur && cur <= 'Z'
}

func isAlnum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b >= utf8.RuneSelf
}

// index returns the byte index of the first match of the term in s at or
// after from, ignoring case, or -1. It never allocates.
func (t term) index(s string, from int) int {
	n := len(t.text)
	if n == 0 || from < 0 || from > len(s) {
		return -1
	}
	if !t.ascii {
		for i := from; i < len(s); i++ {
			if utf8.RuneStart(s[i]) && hasLowerPrefix(s[i:], t.text) {
				return i
			}
		}
		return -1
	}
	// Find the anchor byte, then check the whole term around it.
	for i := from; i+n <= len(s); {
		j := indexEither(s[i+t.at:len(s)-n+t.at+1], t.lo, t.up)
		if j < 0 {
			return -1
		}
		i += j
		if equalFoldASCII(s[i:i+n], t.text) {
			return i
		}
		i++
	}
	return -1
}

// indexEither returns the index of the first a or b in s, or -1.
func indexEither(s string, a, b byte) int {
	i := strings.IndexByte(s, a)
	if a == b {
		return i
	}
	within := s
	if i >= 0 {
		within = s[:i]
	}
	if j := strings.IndexByte(within, b); j >= 0 {
		return j
	}
	return i
}

// equalFoldASCII reports whether s equals the lower-case ASCII t, ignoring
// the case of ASCII letters in s.
func equalFoldASCII(s, t string) bool {
	for i := 0; i < len(t); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[i] {
			return false
		}
	}
	return true
}

// hasLowerPrefix reports whether s starts with the lower-case t, ignoring
// case rune by rune.
func hasLowerPrefix(s, t string) bool {
	for _, tr := range t {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || unicode.ToLower(r) != tr {
			return false
		}
		s = s[size:]
	}
	return true
}
