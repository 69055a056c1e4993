package results

import (
	"strings"
	"unicode/utf8"
)

// CutText cuts text at the last line boundary at or under max bytes and
// reports how many bytes and lines were cut. A first line longer than max
// is cut at max itself, so something is always shown.
func CutText(text string, max int) (kept string, cutBytes, cutLines int) {
	if len(text) <= max {
		return text, 0, 0
	}
	n := strings.LastIndexByte(text[:max], '\n') + 1
	if n == 0 {
		n = max
		for n > 0 && !utf8.RuneStart(text[n]) {
			n-- // not inside a character
		}
	}
	rest := text[n:]
	return text[:n], len(rest), strings.Count(rest, "\n") + boolInt(!strings.HasSuffix(rest, "\n") && rest != "")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
