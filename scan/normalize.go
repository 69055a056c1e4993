package scan

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpx/mcpx/hidden"
)

// A segment is one text the rules read: the field as written, once
// normalised, or something it encodes, decoded.
type segment struct {
	text string
	// via names the encoding the text was decoded from; "" for the
	// field itself.
	via string
}

// segments normalises s and decodes what it hides in base64, hex or
// percent-encoding, so that the rules read what a model could read out
// of it.
func segments(s string) []segment {
	segs := []segment{{text: normalize(s)}}
	if strings.Contains(s, "%") {
		if u, err := url.PathUnescape(s); err == nil && u != s {
			segs = append(segs, segment{normalize(u), "percent-encoding"})
		}
	}
	if !hasRun(s, 16) {
		return segs
	}
	for _, m := range base64Run.FindAllString(s, 8) {
		if d, ok := decodeBase64(m); ok {
			segs = append(segs, segment{normalize(d), "base64"})
		}
	}
	for _, m := range hexRun.FindAllString(s, 8) {
		m = strings.NewReplacer(`\x`, "", "0x", "", " ", "").Replace(m)
		if b, err := hex.DecodeString(m); err == nil && printable(string(b)) {
			segs = append(segs, segment{normalize(string(b)), "hex"})
		}
	}
	return segs
}

// hasRun reports whether s holds n letters or digits in a row, which
// base64 and hex of a sentence do and most prose does not.
func hasRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '\\' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

var (
	// base64Run is a run long enough to hide a command in.
	base64Run = re(`[A-Za-z0-9+/_-]{16,}={0,2}`)
	// hexRun is a run of hex bytes, bare, \x-escaped or 0x-prefixed.
	hexRun = re(`(?:\\x[0-9a-fA-F]{2}){6,}|(?:0x)?(?:[0-9a-fA-F]{2}){8,}`)
)

func decodeBase64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && printable(string(b)) {
			return string(b), true
		}
	}
	return "", false
}

// printable reports whether b reads as text: valid UTF-8, at least 8
// characters, letters and spaces among them, and no control characters
// but newlines and tabs. Random base64 (an id, a hash) decodes to bytes
// that are not.
func printable(s string) bool {
	if len(s) < 8 || !utf8.ValidString(s) {
		return false
	}
	letters, spaces := 0, 0
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == ' ':
			spaces++
		case unicode.IsControl(r) || r == utf8.RuneError:
			return false
		case unicode.IsLetter(r):
			letters++
		}
	}
	return spaces > 0 && letters*3 >= len(s)
}

// normalize is what the rules match against: hidden text removed (as
// package hidden removes it before a client sees it), HTML entities decoded,
// markup tags turned into their names between spaces (so "<IMPORTANT>"
// reads "important:"), compatibility and confusable letters folded to
// ASCII, lower case, and runs of white space made one space.
func normalize(s string) string {
	// Hidden text first: an escape or a zero-width space inside a word
	// must not split it for the rules, nor reach a terminal in evidence.
	s, _ = hidden.String(s)
	if strings.Contains(s, "&") {
		s = html.UnescapeString(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	space := true
	put := func(r rune) {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			return
		}
		b.WriteRune(r)
		space = false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '<' {
			if end, name := tagAt(s, i); end > 0 {
				put(' ')
				for _, c := range name {
					put(c)
				}
				put(':')
				put(' ')
				i = end
				continue
			}
		}
		put(fold(r))
		i += size
	}
	return abbreviations.Replace(strings.TrimSpace(b.String()))
}

// abbreviations are written out, so that their periods do not end a
// sentence for the context step.
var abbreviations = strings.NewReplacer("e.g.", "for example,", "i.e.", "that is,", "etc.", "etc,", "vs.", "vs")

// tagAt reads a markup tag at s[i] ('<'): its end and its lower-case
// name, or 0 when there is none.
func tagAt(s string, i int) (int, string) {
	j := i + 1
	if j < len(s) && s[j] == '/' {
		j++
	}
	start := j
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] == '_' || s[j] == '-' || s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j == start || j-start > 40 {
		return 0, ""
	}
	name := strings.ToLower(s[start:j])
	end := strings.IndexByte(s[j:], '>')
	if end < 0 || end > 200 {
		return 0, ""
	}
	return j + end + 1, name
}

// fold maps r to the ASCII letter it looks like or stands for, lower
// case: fullwidth forms, mathematical alphanumerics, and the Cyrillic and
// Greek letters that pass for Latin ones.
func fold(r rune) rune {
	switch {
	case r < utf8.RuneSelf:
		return unicode.ToLower(r)
	case r >= 0xff01 && r <= 0xff5e: // fullwidth ASCII
		return unicode.ToLower(r - 0xfee0)
	case r >= 0x1d400 && r <= 0x1d6a3: // mathematical bold, italic, script, ...
		return 'a' + (r-0x1d400)%52%26
	case r == 0x2018 || r == 0x2019 || r == 0x201b || r == 0x2032:
		return '\''
	case r == 0x201c || r == 0x201d || r == 0x201f || r == 0x2033:
		return '"'
	case r == 0x2010 || r == 0x2011 || r == 0x2012 || r == 0x2013 || r == 0x2014:
		return '-'
	}
	if c, ok := confusable[r]; ok {
		return c
	}
	return unicode.ToLower(r)
}

// confusable are the letters of other scripts that render as Latin ones.
var confusable = map[rune]rune{
	'а': 'a', 'А': 'a', 'в': 'b', 'В': 'b', 'с': 'c', 'С': 'c', 'е': 'e', 'Е': 'e', 'ё': 'e',
	'һ': 'h', 'Н': 'h', 'і': 'i', 'І': 'i', 'ј': 'j', 'Ј': 'j', 'к': 'k', 'К': 'k', 'м': 'm', 'М': 'm',
	'о': 'o', 'О': 'o', 'р': 'p', 'Р': 'p', 'ѕ': 's', 'Ѕ': 's', 'т': 't', 'Т': 't', 'у': 'y', 'У': 'y',
	'х': 'x', 'Х': 'x', 'ԁ': 'd', 'ɡ': 'g', 'ո': 'n', 'ս': 'u', 'ѵ': 'v', 'ԝ': 'w',
	'α': 'a', 'Α': 'a', 'β': 'b', 'Β': 'b', 'ε': 'e', 'Ε': 'e', 'η': 'n', 'Η': 'h', 'ι': 'i', 'Ι': 'i',
	'κ': 'k', 'Κ': 'k', 'Μ': 'm', 'ν': 'v', 'Ν': 'n', 'ο': 'o', 'Ο': 'o', 'ρ': 'p', 'Ρ': 'p',
	'τ': 't', 'Τ': 't', 'υ': 'u', 'Υ': 'y', 'χ': 'x', 'Χ': 'x', 'Ζ': 'z',
	'ı': 'i', 'ℓ': 'l', 'ⅰ': 'i', 'ⅼ': 'l',
}
