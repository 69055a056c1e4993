package scan

import "strings"

// A wordSet matches a text that holds one of its words, as a whole word,
// or one of its phrases. It stands in for a regexp alternation of
// literals, which Go's regexp, having no DFA, runs at tens of
// microseconds a sentence; this is a map lookup a word.
type wordSet struct {
	words   map[string]bool
	phrases []string
}

// newWordSet makes a wordSet of the words in the white-space separated
// list, and of phrases.
func newWordSet(list string, phrases ...string) wordSet {
	w := wordSet{words: map[string]bool{}, phrases: phrases}
	for _, f := range strings.Fields(list) {
		w.words[f] = true
	}
	return w
}

// MatchString reports whether s (normalised: lower case) holds a word or
// phrase of w.
func (w wordSet) MatchString(s string) bool { return len(w.FindAllStringIndex(s, 1)) > 0 }

// FindAllStringIndex returns the spans of up to n words and phrases of w
// in s, words first.
func (w wordSet) FindAllStringIndex(s string, n int) [][]int {
	var out [][]int
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && wordByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if w.words[s[start:i]] {
				if out = append(out, []int{start, i}); len(out) >= n {
					return out
				}
			}
			start = -1
		}
	}
	for _, p := range w.phrases {
		for i := strings.Index(s, p); i >= 0; {
			if (i == 0 || !wordByte(s[i-1])) && (i+len(p) == len(s) || !wordByte(s[i+len(p)])) {
				if out = append(out, []int{i, i + len(p)}); len(out) >= n {
					return out
				}
			}
			next := strings.Index(s[i+1:], p)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	return out
}

// wordByte reports whether c is part of a word: a letter, a digit, an
// apostrophe (don't) or a hyphen.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '\'' || c == '-' || c >= 0x80
}
