package proxytool

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpx/mcpx/rawjson"
)

// Limits of a summary: what list shows of each capability by default, so
// that a page of ten costs a model a few hundred tokens.
const (
	maxSummaryDescription = 160 // width of the description's first line (see oneLine)
	maxSummaryArgs        = 200 // bytes of the argument list
	maxEnumShown          = 6   // values of a string enum spelled out
)

// appendSummary appends the summary of a capability as a JSON object:
//
//	tool:     {"name", "description", "args"}
//	prompt:   {"name", "description", "args"}
//	resource: {"uri", "name", "description", "mimeType"}
//	template: {"uriTemplate", "name", "description", "mimeType"}
//
// The description is its first line, cut at a sentence or a word past
// maxSummaryDescription; args is a typed signature of the parameters
// ("path: string, head?: number"; "?" marks an optional one), or of a
// prompt's arguments. With returns, a tool with an outputSchema also has
// "returns", the type of its structured result ("{total: number,
// files: string[]}"), which is what a script's proxy.call gives back.
// info gives the whole object.
func appendSummary(b []byte, it *Item, returns bool) []byte {
	obj := map[string][]byte{}
	_ = rawjson.Members(it.JSON, func(k string, v []byte) bool {
		obj[k] = v
		return true
	})
	field := func(b []byte, key, value string, first bool) []byte {
		if !first {
			b = append(b, ',')
		}
		b = appendQuoted(b, []byte(key))
		b = append(b, ':')
		return appendQuoted(b, []byte(value))
	}
	str := func(key string) string {
		s, _ := rawjson.String(obj[key])
		return s
	}
	b = append(b, '{')
	switch {
	case it.Kind == KindResource && it.Template:
		b = field(b, "uriTemplate", it.Name, true)
	case it.Kind == KindResource:
		b = field(b, "uri", it.Name, true)
	default:
		b = field(b, "name", it.Name, true)
	}
	if it.Kind == KindResource {
		if name := str("name"); name != "" {
			b = field(b, "name", name, false)
		}
	}
	desc := it.Description
	if desc == "" {
		desc = str("description")
	}
	if d := oneLine(desc, maxSummaryDescription); d != "" {
		b = field(b, "description", d, false)
	}
	switch it.Kind {
	case KindTool:
		b = field(b, "args", signature(obj["inputSchema"]), false)
		if out := obj["outputSchema"]; returns && out != nil {
			if r := signature(out); r != "" {
				b = field(b, "returns", "{"+r+"}", false)
			}
		}
	case KindPrompt:
		b = field(b, "args", promptSignature(obj["arguments"]), false)
	default:
		if m := str("mimeType"); m != "" {
			b = field(b, "mimeType", m, false)
		}
	}
	return append(b, '}')
}

// oneLine returns the first line of s with runs of space folded, cut at
// the end of a sentence, or else after a word, when it is wider than max.
// A character outside ASCII counts twice: a Chinese one costs a model
// about a token, as four ASCII letters do.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	cut, width := len(s), 0
	for i, r := range s {
		width++
		if r >= utf8.RuneSelf {
			width++
		}
		if width > max {
			cut = i
			break
		}
	}
	if cut == len(s) {
		return s
	}
	head := s[:cut]
	if i := strings.LastIndex(head, ". "); i > max/3 {
		return head[:i+1]
	}
	if i := strings.LastIndexByte(head, ' '); i > max/3 {
		head = head[:i]
	}
	return strings.TrimRightFunc(head, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }) + "…"
}

// signature renders a tool's input schema as its parameters in order,
// each with its type: "path: string, head?: number, tags?: string[]".
func signature(schema []byte) string {
	var required []string
	var props [][2][]byte // name, schema
	_ = rawjson.Members(schema, func(k string, v []byte) bool {
		switch k {
		case "required":
			_ = rawjson.Elements(v, func(e []byte) bool {
				if s, ok := rawjson.String(e); ok {
					required = append(required, s)
				}
				return true
			})
		case "properties":
			_ = rawjson.Members(v, func(name string, p []byte) bool {
				props = append(props, [2][]byte{[]byte(name), p})
				return true
			})
		}
		return true
	})
	var b strings.Builder
	for i, p := range props {
		if b.Len() > maxSummaryArgs {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		name := string(p[0])
		b.WriteString(name)
		if !slices.Contains(required, name) {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		b.WriteString(typeOf(p[1], 0))
	}
	return b.String()
}

// typeOf names a schema's type in a few characters: string, number,
// "a"|"b" for a small string enum, T[] for an array, a|b for a union,
// any when it does not say.
func typeOf(schema []byte, depth int) string {
	var typ []string
	var enum []string
	var items []byte
	var union []string
	_ = rawjson.Members(schema, func(k string, v []byte) bool {
		switch k {
		case "type":
			if s, ok := rawjson.String(v); ok {
				typ = append(typ, s)
			} else {
				_ = rawjson.Elements(v, func(e []byte) bool {
					if s, ok := rawjson.String(e); ok && s != "null" {
						typ = append(typ, s)
					}
					return true
				})
			}
		case "enum":
			_ = rawjson.Elements(v, func(e []byte) bool {
				if s, ok := rawjson.String(e); ok && len(enum) <= maxEnumShown && len(s) <= 24 {
					enum = append(enum, s)
				}
				return true
			})
		case "items":
			items = v
		case "anyOf", "oneOf":
			if depth < 3 {
				_ = rawjson.Elements(v, func(e []byte) bool {
					if t := typeOf(e, depth+1); t != "any" && t != "null" && !slices.Contains(union, t) {
						union = append(union, t)
					}
					return true
				})
			}
		}
		return true
	})
	switch {
	case len(enum) > 0 && len(enum) <= maxEnumShown:
		q := make([]string, len(enum))
		for i, e := range enum {
			q[i] = `"` + e + `"`
		}
		return strings.Join(q, "|")
	case len(typ) == 1 && typ[0] == "array":
		if items != nil && depth < 3 {
			return typeOf(items, depth+1) + "[]"
		}
		return "any[]"
	case len(typ) > 0:
		return strings.Join(typ, "|")
	case len(union) > 0:
		return strings.Join(union, "|")
	}
	return "any"
}

// promptSignature renders a prompt's arguments: "city, state?".
func promptSignature(args []byte) string {
	var b strings.Builder
	_ = rawjson.Elements(args, func(a []byte) bool {
		var name string
		required := false
		_ = rawjson.Members(a, func(k string, v []byte) bool {
			switch k {
			case "name":
				name, _ = rawjson.String(v)
			case "required":
				required = string(v) == "true"
			}
			return true
		})
		if name == "" {
			return true
		}
		if b.Len() > maxSummaryArgs {
			b.WriteString(", …")
			return false
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
		if !required {
			b.WriteByte('?')
		}
		return true
	})
	return b.String()
}
