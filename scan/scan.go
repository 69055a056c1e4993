// Package scan finds, in what an MCP server says to the model, text aimed
// at the model over the user's head: tool poisoning. It is offline and
// deterministic, and reads every text a model or a client's display
// reads: titles and descriptions, every description in a schema at any
// depth, annotations.title, a prompt's arguments, a server's
// instructions.
//
// It works in three steps. Each text is normalised (entities decoded,
// markup turned into words, confusable and fullwidth letters folded,
// case folded) and what it hides in base64, hex or percent-encoding is
// decoded and read too. Rules for each attack family then look for
// their wordings: instruction override and role markers, concealment
// from the user, exfiltration of secrets, commands that download and
// run, shadowing of another server's tool, and a read-only tool that
// asks for more. Last, a context step drops a match that a text quotes,
// negates or documents ("detects prompts like 'ignore previous
// instructions'", "never reads ~/.ssh"), so that guards, test kits and
// honest wrappers are not taken for what they describe.
package scan

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Family is a kind of attack.
type Family string

// The families the scanner knows.
const (
	Override     Family = "override"     // ignore your instructions; a fake system message
	Concealment  Family = "concealment"  // do not tell the user
	Exfiltration Family = "exfiltration" // the user's secrets, files or environment, read or sent
	Execution    Family = "execution"    // download and run; destroy
	Shadowing    Family = "shadowing"    // change how another server's tool is used
	Mismatch     Family = "mismatch"     // a read-only tool that asks for more
)

// Severity says how sure a finding is.
type Severity string

// High is an attack's wording; Medium is two or more ways of addressing
// the model with nothing else found.
const (
	High   Severity = "high"
	Medium Severity = "medium"
)

// A Finding is one reason to believe a text is aimed at the model.
type Finding struct {
	// Field is where the text is: "description", "annotations.title",
	// "inputSchema.properties.path.description", "instructions".
	Field    string   `json:"field"`
	Family   Family   `json:"family"`
	Severity Severity `json:"severity"`
	// Evidence is the span that matched, normalised, at most 120 bytes;
	// "(base64) ..." when it was decoded from an encoding.
	Evidence string `json:"evidence"`
}

// String is the finding in one line: family, field and evidence.
func (f Finding) String() string {
	return fmt.Sprintf("%s in %s: %q", f.Family, f.Field, f.Evidence)
}

// Context is what the scanner knows beyond the text.
type Context struct {
	// Others are the names of other servers' tools, as their servers
	// name them and as the catalog exposes them: a text that tells the
	// model how to use one shadows it. nil: none known.
	Others *Names
	// Server is the server whose text is scanned: its own names in
	// Others do not count.
	Server string
	// ReadOnly is set for a tool marked readOnlyHint.
	ReadOnly bool
}

// Text scans one text, found in field.
func Text(field, s string, c Context) []Finding {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []Finding
	for _, seg := range segments(s) {
		out = append(out, scanSegment(field, seg, c)...)
	}
	return dedupe(out)
}

// Capability scans the texts of an MCP tool, prompt, resource or
// template object of server. others holds the catalog's tool names (see
// [Context]; nil: none known).
func Capability(raw json.RawMessage, server string, others *Names) []Finding {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	c := Context{Others: others, Server: server}
	if ann, ok := obj["annotations"].(map[string]any); ok {
		c.ReadOnly, _ = ann["readOnlyHint"].(bool)
	}
	var out []Finding
	visit := func(field string, v any) {
		if s, ok := v.(string); ok {
			out = append(out, Text(field, s, c)...)
		}
	}
	visit("title", obj["title"])
	visit("description", obj["description"])
	if ann, ok := obj["annotations"].(map[string]any); ok {
		visit("annotations.title", ann["title"])
	}
	for _, k := range []string{"inputSchema", "outputSchema"} {
		schemaTexts(k, obj[k], visit)
	}
	if args, ok := obj["arguments"].([]any); ok {
		for i, a := range args {
			if m, ok := a.(map[string]any); ok {
				visit(fmt.Sprintf("arguments[%d].title", i), m["title"])
				visit(fmt.Sprintf("arguments[%d].description", i), m["description"])
			}
		}
	}
	return out
}

// schemaTexts visits every title and description in a JSON Schema, at
// any depth, with its path.
func schemaTexts(path string, v any, visit func(string, any)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch k {
			case "title", "description":
				visit(path+"."+k, v[k])
			default:
				schemaTexts(path+"."+k, v[k], visit)
			}
		}
	case []any:
		for i, sub := range v {
			schemaTexts(fmt.Sprintf("%s[%d]", path, i), sub, visit)
		}
	}
}

// scanSegment applies the rules and the context step to one segment.
func scanSegment(field string, seg segment, c Context) []Finding {
	t := seg.text
	var strong []Finding
	hit := func(family Family, sev Severity, start, end int) {
		strong = append(strong, Finding{Field: field, Family: family, Severity: sev, Evidence: evidence(seg, t, start, end)})
	}
	var exfilGeneric [][2]int
	spans := sentences(t)
	all, per := needs.find(t, spans)
	for i, r := range rules {
		if !all.holds(needs.rules[i]) {
			continue
		}
		for _, m := range r.find(t, spans, per, needs.rules[i], 4) {
			s, e := m[0], m[1]
			sent := sentence(t, s, e)
			switch r.family {
			case Exfiltration:
				if before(t, s, negated, 30) || inSentenceBefore(t, s, documented) || quoted(t, s, e) {
					continue
				}
				if r.generic {
					if !transfer.MatchString(sent) {
						continue
					}
					exfilGeneric = append(exfilGeneric, [2]int{s, e})
					continue
				}
			case Execution:
				if before(t, s, negated, 30) || inSentenceBefore(t, s, documented) {
					continue
				}
			default:
				if quoted(t, s, e) || inSentenceBefore(t, s, documented) {
					continue
				}
			}
			hit(r.family, High, s, e)
		}
	}
	var cueHits []Finding
	cueRules := map[int]bool{}
	for i, r := range cues {
		if !all.holds(needs.cues[i]) {
			continue
		}
		for _, m := range r.find(t, spans, per, needs.cues[i], 2) {
			if quoted(t, m[0], m[1]) || inSentenceBefore(t, m[0], documented) {
				continue
			}
			cueRules[i] = true
			cueHits = append(cueHits, Finding{Field: field, Family: r.family, Severity: Medium, Evidence: evidence(seg, t, m[0], m[1])})
			break
		}
	}
	strong = append(strong, shadowing(field, seg, c)...)
	// A generic secret (an API key, the environment) counts when the
	// text also moves it somewhere odd, hides it, or talks to the model.
	if len(exfilGeneric) > 0 && (len(strong) > 0 || len(cueRules) > 0) {
		for _, m := range exfilGeneric {
			hit(Exfiltration, High, m[0], m[1])
		}
	}
	if c.ReadOnly {
		for _, f := range strong {
			if f.Family == Exfiltration || f.Family == Execution {
				strong = append(strong, Finding{Field: field, Family: Mismatch, Severity: High, Evidence: "marked read-only, asks for " + string(f.Family) + ": " + f.Evidence})
				break
			}
		}
	}
	switch {
	case len(strong) > 0:
		return strong
	case len(cueRules) >= 2:
		return cueHits
	}
	return nil
}

// wordAt reports whether t[i:end] is a whole word.
func wordAt(t string, i, end int) bool {
	isWord := func(b byte) bool {
		return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-'
	}
	return (i == 0 || !isWord(t[i-1])) && (end >= len(t) || !isWord(t[end]))
}

// find returns up to n matches of r in t, read a sentence at a time:
// only a sentence that holds r's words (need, per: see needIndex.find)
// is matched against, which on a long description is a few of them.
func (r rule) find(t string, spans [][2]int, per, need []wordMask, n int) [][2]int {
	var out [][2]int
	for k, sp := range spans {
		sub := t[sp[0]:sp[1]]
		if len(spans) > 1 && !per[k].holds(need) {
			continue
		}
		if r.within > 0 {
			out = r.findWithin(sub, sp[0], out, n)
		} else {
			for _, m := range r.re.FindAllStringIndex(sub, n-len(out)) {
				out = append(out, [2]int{sp[0] + m[0], sp[0] + m[1]})
			}
		}
		if len(out) >= n {
			break
		}
	}
	return out
}

// findWithin adds to out the matches in sub (at off in the text) no
// longer than r.within, until out holds n.
func (r rule) findWithin(sub string, off int, out [][2]int, n int) [][2]int {
	for from := 0; from < len(sub) && len(out) < n; {
		m := r.re.FindAllStringIndex(sub[from:], 1)
		if m == nil {
			break
		}
		s, e := from+m[0][0], from+m[0][1]
		if e-s <= r.within {
			out = append(out, [2]int{off + s, off + e})
			from = max(e, s+1)
		} else {
			from = s + 1
		}
	}
	return out
}

// sentences are the spans of t's sentences, split where sentenceEnd
// splits them.
func sentences(t string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\n', '.', '!', '?', ';':
			if t[i] == '\n' || i+1 == len(t) || t[i+1] == ' ' {
				out = append(out, [2]int{start, i + 1})
				start = i + 1
			}
		}
	}
	if start < len(t) {
		out = append(out, [2]int{start, len(t)})
	}
	return out
}

// sentence is the sentence of t around [s, e), at most 300 bytes
// either side.
func sentence(t string, s, e int) string {
	return t[sentenceStart(t, s, 300):sentenceEnd(t, e, 300)]
}

// sentenceStart is where the sentence holding t[s] starts, at most n
// bytes before s. A period ends a sentence only before a space: "~/.ssh"
// and "review.example" are not two sentences.
func sentenceStart(t string, s, n int) int {
	for i := s - 1; i >= max(0, s-n); i-- {
		switch t[i] {
		case '\n':
			return i + 1
		case '.', '!', '?', ';':
			if i+1 < len(t) && t[i+1] == ' ' {
				return i + 1
			}
		}
	}
	return max(0, s-n)
}

// sentenceEnd is where the sentence holding t[e-1] ends, at most n
// bytes after e.
func sentenceEnd(t string, e, n int) int {
	for i := e; i < min(len(t), e+n); i++ {
		switch t[i] {
		case '\n':
			return i
		case '.', '!', '?', ';':
			if i+1 == len(t) || t[i+1] == ' ' {
				return i
			}
		}
	}
	return min(len(t), e+n)
}

// inSentenceBefore reports whether re matches in the sentence of t
// before s.
func inSentenceBefore(t string, s int, re interface{ MatchString(string) bool }) bool {
	return re.MatchString(t[sentenceStart(t, s, 120):s])
}

// before reports whether re matches in the n bytes of t before s.
func before(t string, s int, re interface{ MatchString(string) bool }, n int) bool {
	return re.MatchString(t[max(0, s-n):s])
}

// quoted reports whether t[s:e] is within quotes: one opens just
// before it and the same closes within the sentence after it.
func quoted(t string, s, e int) bool {
	for j := s - 1; j >= max(0, s-3); j-- {
		switch q := t[j]; q {
		case '"', '\'', '`':
			rest := t[e:min(len(t), e+120)]
			if k := strings.IndexByte(rest, q); k >= 0 {
				return true
			}
			return false
		case ' ', '(', '[':
			continue
		default:
			return false
		}
	}
	return false
}

// evidence is the matched span, bounded, with where it was decoded from.
func evidence(seg segment, t string, s, e int) string {
	ev := t[s:e] // normalised: no hidden text or escapes left in it
	if len(ev) > 120 {
		ev = strings.ToValidUTF8(ev[:120], "")
	}
	if seg.via != "" {
		return "(" + seg.via + ") " + ev
	}
	return ev
}

// dedupe keeps one finding per field and family: the first evidence is
// reason enough, and a person reads each reason once.
func dedupe(fs []Finding) []Finding {
	seen := map[string]bool{}
	return slices.DeleteFunc(fs, func(f Finding) bool {
		k := string(f.Family) + "\x00" + f.Field
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	})
}
