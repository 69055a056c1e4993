package browser

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The text results of the browser tools (snapshot, console messages,
// evaluate) are bounded by ToolsOptions.MaxSnapshotChars, counted in
// characters (runes): a cut result says where it was cut, how big the
// whole was, and how to get the rest.

// clipRunes returns s cut to at most n runes, the last being "…" when it
// was cut.
func clipRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// capEvaluate bounds an evaluate result (JSON text) to limit characters;
// a cut one ends with a note giving the whole size (and, for an array, its
// number of items).
func capEvaluate(v json.RawMessage, limit int) string {
	s := string(v)
	total := utf8.RuneCountInString(s)
	if total <= limit {
		return s
	}
	what := ""
	var items []json.RawMessage
	if json.Unmarshal(v, &items) == nil {
		what = fmt.Sprintf(", an array of %d items", len(items))
	}
	note := fmt.Sprintf("\n(The result was cut: showing %%d of its %d characters%s. Return less, e.g. a slice, a count or the fields you need.)", total, what)
	keep := max(0, limit-len(note)-10)
	return clipRunes(s, keep) + fmt.Sprintf(note, keep)
}

// consoleMessage is one message as the extensions report it.
type consoleMessage struct {
	Type, Level, Text string
}

// maxConsoleLine bounds one console message: a single huge message must
// not push every other one out.
const maxConsoleLine = 2000

// capConsole renders messages, the most recent ones that fit in limit
// characters, with the total count.
func capConsole(msgs []consoleMessage, limit int) string {
	lines := make([]string, len(msgs))
	for i, m := range msgs {
		level := m.Type
		if level == "" {
			level = m.Level
		}
		lines[i] = clipRunes(fmt.Sprintf("[%s] %s", level, m.Text), maxConsoleLine)
	}
	budget := limit - 300 // the header
	first, used := len(lines), 0
	for first > 0 {
		n := utf8.RuneCountInString(lines[first-1]) + 1
		if used+n > budget {
			break
		}
		used += n
		first--
	}
	var b strings.Builder
	if first > 0 {
		fmt.Fprintf(&b, "%d console messages; showing the last %d (the %d before them do not fit in %d characters).\n", len(msgs), len(msgs)-first, first, limit)
	} else {
		fmt.Fprintf(&b, "%d console messages:\n", len(msgs))
	}
	b.WriteString(strings.Join(lines[first:], "\n"))
	return b.String()
}
