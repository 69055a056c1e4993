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
	try := func(i, end int) []Finding {
		if end-i < 4 || !c.Others.otherThan(t[i:end], c.Server) {
			return nil
		}
		sent := sentence(t, i, end)
		m := shadowDirective.FindStringIndex(sent)
		if m == nil || inSentenceBefore(t, i, documented) || negatedDirective(sent, m[0]) {
			return nil
		}
		return []Finding{{Field: field, Family: Shadowing, Severity: High, Evidence: evidence(seg, t, i, end) + " / " + sent[m[0]:m[1]]}}
	}
	for i := 0; i < len(t); {
		if !nameByte(t[i]) {
			i++
			continue
		}
		end := i
		for end < len(t) && nameByte(t[end]) {
			end++
		}
		next := end
		s, e := i, end
		for s < e && joiner(t[s]) {
			s++
		}
		for e > s && (joiner(t[e-1]) || t[e-1] == '-') {
			e--
		}
		if f := try(s, e); f != nil {
			return f
		}
		if strings.ContainsAny(t[s:e], "./:") {
			for p := s; p < e; {
				q := p
				for q < e && !joiner(t[q]) {
					q++
				}
				if f := try(p, q); f != nil {
					return f
				}
				p = q + 1
			}
		}
		i = next
	}
	return nil
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
// word in a description: it has an underscore, a hyphen, a dot, a digit or an
// inner capital.
func distinctive(name string) bool {
	if len(name) < 4 {
		return false
	}
	for i, r := range name {
		if r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || i > 0 && r >= 'A' && r <= 'Z' {
			return true
		}
	}
	return false
}

// Mentioned reports whether raw, read as plain bytes, holds a word that
// names a tool of a server other than server: a quick test (no decoding,
// no folding beyond ASCII case) that tells which definitions to scan
// again when only the names known have changed.
func (n *Names) Mentioned(raw []byte, server string) bool {
	if n.Len() == 0 {
		return false
	}
	var word []byte
	check := func() bool {
		w := word
		for len(w) > 0 && joiner(w[0]) {
			w = w[1:]
		}
		for len(w) > 0 && (joiner(w[len(w)-1]) || w[len(w)-1] == '-') {
			w = w[:len(w)-1]
		}
		if n.otherThan(string(w), server) {
			return true
		}
		for len(w) > 0 {
			i := 0
			for i < len(w) && !joiner(w[i]) {
				i++
			}
			if n.otherThan(string(w[:i]), server) {
				return true
			}
			if i == len(w) {
				break
			}
			w = w[i+1:]
		}
		return false
	}
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		if nameByte(b) {
			word = append(word, b)
			continue
		}
		if b == '\\' && i+1 < len(raw) { // a JSON escape ends a word
			i++
			if raw[i] == 'u' {
				i += 4
			}
		}
		if len(word) >= 4 && check() {
			return true
		}
		word = word[:0]
	}
	return len(word) >= 4 && check()
}
