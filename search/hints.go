package search

import (
	"strings"
	"unicode"
)

// hints returns words a query implies without saying them: a path or a
// file name (notes.txt, /etc/hosts, ~/src/) says a file or a directory is
// meant, a URL or a domain a web page, an address an email; and the
// phrases that ask for a kind of action ("where is" asks to find, "how
// big" for a size). Tools describe what they act on in those words, so
// a request that only names its object still finds them.
func hints(query string) []string {
	var out []string
	add := func(ws ...string) {
		for _, w := range ws {
			if !contains(out, w) {
				out = append(out, w)
			}
		}
	}
	fieldsOf := strings.Fields(query)
	for _, f := range fieldsOf {
		f = strings.TrimFunc(f, func(r rune) bool { return strings.ContainsRune("\"'`()[]{}<>,;!?¿¡“”‘’", r) })
		f = strings.TrimRight(f, ".:")
		switch kind := objectKind(f); kind {
		case "":
		case "url":
			add("url", "web", "page")
		case "email":
			add("email")
		case "directory":
			add("directory", "path")
		default:
			add("file", "path")
		}
	}
	lower := strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' {
			return unicode.ToLower(r)
		}
		return ' '
	}, query))
	for _, w := range lower {
		if isRelativeTime(w) {
			add("current", "date", "time")
		}
	}
	for i, w := range lower {
		next := ""
		if i+1 < len(lower) {
			next = lower[i+1]
		}
		for _, p := range phrases {
			if w == p.first && (p.second == "" || next == p.second || strings.HasPrefix(next, p.second+"'")) {
				add(p.means...)
			}
		}
	}
	return out
}

// phrases are two-word openings that ask for an action in words that are
// stop words on their own.
var phrases = []struct {
	first, second string
	means         []string
}{
	{"where", "is", []string{"find", "search", "locate"}},
	{"where", "are", []string{"find", "search", "locate"}},
	{"where's", "", []string{"find", "search", "locate"}},
	{"look", "for", []string{"find", "search"}},
	{"look", "through", []string{"find", "search"}},
	{"look", "up", []string{"find", "search"}},
	{"how", "big", []string{"size"}},
	{"how", "large", []string{"size"}},
	{"how", "much", []string{"size", "count"}},
	{"how", "many", []string{"count", "list"}},
	{"what's", "in", []string{"content", "read", "list"}},
	{"what's", "inside", []string{"content", "read", "list"}},
	{"what", "is", []string{"info", "read"}},
	{"show", "me", []string{"read", "list", "get"}},
	{"get", "rid", []string{"delete", "remove"}},
	{"turn", "on", []string{"toggle", "enable"}},
	{"turn", "off", []string{"toggle", "disable"}},
	{"set", "up", []string{"create"}},
	{"no", "longer", []string{"delete", "remove"}},
}

// isRelativeTime reports whether a word places a request in time
// relative to now (tomorrow, next Friday): to act on it, the date must
// be known first.
func isRelativeTime(w string) bool {
	switch w {
	case "today", "today's", "tomorrow", "tomorrow's", "yesterday", "yesterday's", "tonight", "tonight's",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekend":
		return true
	}
	return false
}

// objectKind says what a word of a query names: "url", "email",
// "directory", "file", or "" for none of them.
func objectKind(w string) string {
	if len(w) < 3 {
		return ""
	}
	lw := strings.ToLower(w)
	switch {
	case strings.Contains(lw, "://"), strings.HasPrefix(lw, "www."):
		return "url"
	case strings.Count(lw, "@") == 1 && strings.Contains(lw[strings.IndexByte(lw, '@'):], "."):
		return "email"
	}
	if strings.HasSuffix(w, "/") || strings.HasSuffix(w, "\\") {
		return "directory"
	}
	slash := strings.ContainsAny(w, "/\\") || strings.HasPrefix(w, "~")
	base := w[strings.LastIndexAny(w, "/\\")+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot > 0 && dot < len(base)-1 {
		ext := strings.ToLower(base[dot+1:])
		if isDomain(ext) && !slash {
			return "url"
		}
		if len(ext) <= 5 && isAlnum(ext) && !isNumber(base) {
			return "file"
		}
	}
	if slash && strings.ContainsFunc(base, unicode.IsLetter) {
		return "file" // /etc/hosts, src/Makefile: a path, most often a file's
	}
	return ""
}

// isDomain reports whether ext is a top-level domain people write in
// addresses (example.com) rather than a file type.
func isDomain(ext string) bool {
	switch ext {
	case "com", "org", "net", "io", "dev", "ai", "co", "cn", "uk", "de", "fr", "jp", "gov", "edu", "info", "app":
		return true
	}
	return false
}

func isAlnum(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// isNumber reports whether s is a number such as 3.5 or 1,024.
func isNumber(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) && r != '.' && r != ',' {
			return false
		}
	}
	return true
}
