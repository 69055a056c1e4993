package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// words calls emit with each search term of s, in order: s split into
// words at anything that is not a letter or digit and at case changes
// inside a word (getWeather, HTTPServer), letters and digits split apart
// too (base64 also stays whole), lower-cased, with accents removed; stop
// words and single letters or digits left out; English words stemmed.
// Chinese, Japanese and Korean text, written without spaces, becomes
// overlapping pairs of characters.
//
// stems caches stemming across calls: the same few thousand words recur
// in every description of a catalog. It may be nil.
func words(s string, stems map[string]string, emit func(term string)) {
	start := -1 // byte index of the current run of letters and digits
	cjk := -1   // the same for a run of CJK characters
	for i, r := range s {
		switch {
		case isCJK(r):
			if start >= 0 {
				splitRun(s[start:i], stems, emit)
				start = -1
			}
			if cjk < 0 {
				cjk = i
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) && start >= 0:
			if cjk >= 0 {
				bigrams(s[cjk:i], emit)
				cjk = -1
			}
			if start < 0 {
				start = i
			}
		case r == '\'' || r == '’':
			// "what's", "don't": the apostrophe ends the word, and what
			// follows it is one letter or a stop word.
			fallthrough
		default:
			if start >= 0 {
				splitRun(s[start:i], stems, emit)
				start = -1
			}
			if cjk >= 0 {
				bigrams(s[cjk:i], emit)
				cjk = -1
			}
		}
	}
	if start >= 0 {
		splitRun(s[start:], stems, emit)
	}
	if cjk >= 0 {
		bigrams(s[cjk:], emit)
	}
}

// splitRun emits the terms of one run of letters and digits: its parts at
// case changes and between letters and digits, and the whole run as well
// when it mixes letters and digits (mp3, base64, s3).
func splitRun(run string, stems map[string]string, emit func(string)) {
	var parts [16]string
	n, mixed := 0, false
	partStart := 0
	var prevClass, prevPrevClass int
	for i, r := range run {
		c := charClass(r)
		if i > 0 {
			split := false
			switch {
			case c == classDigit && prevClass != classDigit, c != classDigit && prevClass == classDigit:
				split, mixed = true, true
			case c == classUpper && prevClass == classLower:
				split = true // getWeather
			case c == classLower && prevClass == classUpper && prevPrevClass == classUpper:
				// HTTPServer: the last capital starts the next word.
				j := i - utf8.RuneLen(lastRune(run[:i]))
				if j > partStart && n < len(parts) {
					parts[n] = run[partStart:j]
					n++
					partStart = j
				}
			}
			if split && n < len(parts) {
				parts[n] = run[partStart:i]
				n++
				partStart = i
			}
		}
		prevPrevClass, prevClass = prevClass, c
	}
	if n < len(parts) {
		parts[n] = run[partStart:]
		n++
	}
	for _, p := range parts[:n] {
		term(p, stems, emit)
	}
	if mixed && n > 1 {
		term(run, stems, emit)
	}
}

const (
	classLower = iota
	classUpper
	classDigit
)

func charClass(r rune) int {
	switch {
	case unicode.IsDigit(r):
		return classDigit
	case unicode.IsUpper(r):
		return classUpper
	}
	return classLower
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// term emits one word as a search term, or nothing for a stop word or a
// single letter or digit.
func term(w string, stems map[string]string, emit func(string)) {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		if len(w) < 2 {
			return
		}
		w = lowerASCII(w)
	} else {
		w = fold(w)
		if utf8.RuneCountInString(w) < 2 {
			return
		}
	}
	if isStopWord(w) {
		return
	}
	emit(stem(w, stems))
	// subfolder, subdirectories: the word after "sub" is searched too.
	if rest, ok := strings.CutPrefix(w, "sub"); ok && len(rest) >= 4 && isASCIILetters(rest) {
		emit(stem(rest, stems))
	}
}

// stem returns the English stem of a lower-case word; words with digits
// or letters outside ASCII stay as they are.
func stem(w string, stems map[string]string) string {
	if len(w) < 3 || !isASCIILetters(w) {
		return w
	}
	if s, ok := stems[w]; ok {
		return s
	}
	s := english.Stem(w, true)
	if stems != nil && len(stems) < maxStemCache {
		stems[strings.Clone(w)] = s
	}
	return s
}

// maxStemCache bounds the stem cache of one build: a catalog's
// vocabulary is a few tens of thousands of words.
const maxStemCache = 1 << 17

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func lowerASCII(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(w)
		}
	}
	return w
}

// fold lower-cases a word and removes its accents (é to e), so that
// "café" and "Cafe" are one term.
func fold(w string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	if s, _, err := transform.String(t, w); err == nil {
		w = s
	}
	return strings.ToLower(w)
}

// isCJK reports whether r is written without spaces between words: Han,
// Hiragana, Katakana, Hangul.
func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// bigrams emits the overlapping character pairs of a CJK run, or the one
// character of a run of one: the usual way to search such text without a
// dictionary.
func bigrams(run string, emit func(string)) {
	first, size := utf8.DecodeRuneInString(run)
	if size == len(run) {
		emit(string(first))
		return
	}
	for i := 0; i < len(run); {
		_, n := utf8.DecodeRuneInString(run[i:])
		if i+n >= len(run) {
			break
		}
		_, m := utf8.DecodeRuneInString(run[i+n:])
		emit(run[i : i+n+m])
		i += n
	}
}
