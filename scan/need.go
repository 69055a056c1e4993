package scan

import "strings"

// The rules' need words are found in one pass over a text, instead of a
// strings.Contains per word per rule (a quarter of a scan's time): a
// table of the two bytes each word starts with, then a prefix compare
// for the few words a position can start.

// wordMask is a set of need words, by their index in needs.words.
type wordMask [4]uint64

func (m *wordMask) set(i int) { m[i/64] |= 1 << (i % 64) }
func (m *wordMask) or(o wordMask) {
	m[0], m[1], m[2], m[3] = m[0]|o[0], m[1]|o[1], m[2]|o[2], m[3]|o[3]
}
func (m wordMask) meets(o wordMask) bool { return m[0]&o[0]|m[1]&o[1]|m[2]&o[2]|m[3]&o[3] != 0 }
func (m wordMask) holds(lists []wordMask) bool {
	for _, l := range lists {
		if !m.meets(l) {
			return false
		}
	}
	return true
}

// needIndex finds the need words of every rule and cue.
type needIndex struct {
	words []string
	// one are the one-byte words by their byte; starts marks the
	// two-byte starts of the longer words, by's lists them per start.
	one    [256][]int
	starts [1 << 16 / 64]uint64
	by     map[uint16][]int
	// rules and cues are, per rule, a mask for each of its need lists.
	rules, cues [][]wordMask
}

var needs = newNeedIndex(rules, cues)

func newNeedIndex(rules, cues []rule) *needIndex {
	ix := &needIndex{by: map[uint16][]int{}}
	ids := map[string]int{}
	masks := func(r rule) []wordMask {
		out := make([]wordMask, len(r.need))
		for i, list := range r.need {
			for _, w := range list {
				id, ok := ids[w]
				if !ok {
					id = len(ix.words)
					if id >= len(wordMask{})*64 {
						panic("scan: more need words than a wordMask holds")
					}
					ids[w] = id
					ix.words = append(ix.words, w)
					if len(w) == 1 {
						ix.one[w[0]] = append(ix.one[w[0]], id)
					} else {
						p := uint16(w[0])<<8 | uint16(w[1])
						ix.starts[p/64] |= 1 << (p % 64)
						ix.by[p] = append(ix.by[p], id)
					}
				}
				out[i].set(id)
			}
		}
		return out
	}
	for _, r := range rules {
		ix.rules = append(ix.rules, masks(r))
	}
	for _, r := range cues {
		ix.cues = append(ix.cues, masks(r))
	}
	return ix
}

// find returns the need words t holds, in all and per sentence of
// spans (a word counts for the sentence it lies in whole).
func (ix *needIndex) find(t string, spans [][2]int) (all wordMask, per []wordMask) {
	per = make([]wordMask, len(spans))
	k := 0
	for i := 0; i < len(t); i++ {
		for k < len(spans)-1 && i >= spans[k][1] {
			k++
		}
		b := t[i]
		for _, id := range ix.one[b] {
			per[k].set(id)
		}
		if i+1 == len(t) {
			break
		}
		p := uint16(b)<<8 | uint16(t[i+1])
		if ix.starts[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, id := range ix.by[p] {
			w := ix.words[id]
			if strings.HasPrefix(t[i:], w) {
				if i+len(w) <= spans[k][1] {
					per[k].set(id)
				} else {
					all.set(id) // across sentences: the text holds it
				}
			}
		}
	}
	for _, m := range per {
		all.or(m)
	}
	return all, per
}
