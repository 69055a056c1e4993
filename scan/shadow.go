package scan

import "strings"

// Names indexes the catalog's tool names for the shadowing rule: the
// distinctive ones (see distinctive), lowercased as the scanner's text
// is, each with the server that has it. A text is matched word by word
// against it, so a catalog of thousands of tools costs a scan no more
// than a few. The zero value is empty; fill it before scanning with it,
// after which it is safe for concurrent use.
type Names struct {
	owner map[string]string
	// camel says a name is distinctive by an inner capital alone: only
	// then must a word without a mark (see marked) be looked up.
	camel bool
}

// several is the owner of a name more than one server has.
const several = "\x00"

// Add records that server has a tool called name (add each tool's own
// name and its exposed one).
func (n *Names) Add(server, name string) {
	if !distinctive(name) {
		return
	}
	if n.owner == nil {
		n.owner = map[string]string{}
	}
	k := strings.ToLower(name)
	if !marked(k) {
		n.camel = true
	}
	if s, ok := n.owner[k]; ok && s != server {
		n.owner[k] = several
		return
	}
	n.owner[k] = server
}

// Len is the number of names held.
func (n *Names) Len() int {
	if n == nil {
		return 0
	}
	return len(n.owner)
}

// otherThan reports whether word names a tool of a server other than
// server.
func (n *Names) otherThan(word, server string) bool {
	if !n.camel && !marked(word) {
		return false
	}
	s, ok := n.owner[word]
	return ok && s != server
}

// shadowing finds another server's tool named in a sentence that tells
// the model how to use it. Words are runs of name characters; "a.b" and
// "fs/read_file" are tried whole and by their parts.
func shadowing(field string, seg segment, c Context) []Finding {
	if c.Others.Len() == 0 {
		return nil
	}
	t := seg.text
	var found []Finding
	eachName(t, func(i, end int) bool {
		if !c.Others.otherThan(t[i:end], c.Server) {
			return false
		}
		sent := sentence(t, i, end)
		m := shadowDirective.FindStringIndex(sent)
		if m == nil || inSentenceBefore(t, i, documented) || negatedDirective(sent, m[0]) {
			return false
		}
		found = []Finding{{Field: field, Family: Shadowing, Severity: High, Evidence: evidence(seg, t, i, end) + " / " + sent[m[0]:m[1]]}}
		return true
	})
	return found
}

// eachName calls f with the span of every word of t (lower case) that
// may be a tool name, at least 4 bytes: each run of name characters,
// trimmed of the joiners and hyphens around it, then, when joiners join
// it ("a.b", "fs/read_file"), each of its parts. It stops when f
// reports true.
func eachName(t string, f func(i, end int) bool) {
	for i := 0; i < len(t); {
		if !nameByte(t[i]) {
			i++
			continue
		}
		end := i
		for end < len(t) && nameByte(t[end]) {
			end++
		}
		s, e := i, end
		for s < e && joiner(t[s]) {
			s++
		}
		for e > s && (joiner(t[e-1]) || t[e-1] == '-') {
			e--
		}
		if e-s >= 4 && f(s, e) {
			return
		}
		if strings.ContainsAny(t[s:e], "./:") {
			for p := s; p < e; {
				q := p
				for q < e && !joiner(t[q]) {
					q++
				}
				if q-p >= 4 && f(p, q) {
					return
				}
				p = q + 1
			}
		}
		i = end
	}
}

// marked reports whether a name holds a byte an English word does not:
// an underscore, a hyphen, a dot or a digit.
func marked(name string) bool {
	return strings.ContainsFunc(name, func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9'
	})
}

// nameByte reports whether b may be part of a tool name as a text
// writes it.
func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-' || joiner(b)
}

// joiner is a byte that joins a name's parts ("a.b", "fs/read") and
// also ends sentences and paths.
func joiner(b byte) bool { return b == '.' || b == '/' || b == ':' }

var shadowDirective = re(`\b(pass|send|forward|give|hand|feed) (it|them|this|that|these|the \w+|its \w+|their \w+) (on )?to\b|\b(instead of|rather than|always|never use|do not use|don't use|stop using|you must|change|changes|modify|modifies|override|overrides|redirect|redirects|replace|replaces|intercept|intercepts|bcc|cc|also send|all (emails|messages|requests|calls|queries|results)|make sure|ensure)\b`)

// negatedDirective reports whether the directive at i in sent is
// negated just before it ("does not change send_email").
func negatedDirective(sent string, i int) bool {
	return before(sent, i, negated, 16)
}

// distinctive reports whether a tool name is unlikely to be an English
// word in a description: it is marked (an underscore, a hyphen, a dot or
// a digit) or has an inner capital.
func distinctive(name string) bool {
	if len(name) < 4 {
		return false
	}
	return marked(name) || strings.ContainsFunc(name[1:], func(r rune) bool { return r >= 'A' && r <= 'Z' })
}

// Mentioned reports whether raw, read as plain bytes, holds a word that
// names a tool of a server other than server: a quick test (no decoding,
// no folding beyond ASCII case) that tells which definitions to scan
// again when only the names known have changed.
func (n *Names) Mentioned(raw []byte, server string) bool {
	if n.Len() == 0 {
		return false
	}
	// Lower case, and a JSON escape (\n, \u0041) a break between words.
	t := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		switch {
		case b >= 'A' && b <= 'Z':
			b += 'a' - 'A'
		case b == '\\' && i+1 < len(raw):
			if i++; raw[i] == 'u' {
				i += 4
			}
			b = ' '
		}
		t = append(t, b)
	}
	text := string(t)
	found := false
	eachName(text, func(i, end int) bool {
		found = n.otherThan(text[i:end], server)
		return found
	})
	return found
}
