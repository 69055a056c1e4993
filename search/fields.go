package search

import (
	"encoding/json"
	"strings"

	"github.com/mcpx/mcpx/rawjson"
)

// Doc is one capability as the index reads it: a tool, a prompt, a
// resource or a resource template.
type Doc struct {
	// Name is the name a client calls it by (for a resource its URI, for
	// a template its URI template); Original is the name its server uses,
	// and Server that server's name. What Name adds to Original (the
	// server's prefix) is searched as part of the server.
	Name, Original, Server string
	Title, Description     string
	// JSON is the capability's MCP object. The index reads from it what
	// else a person would search by: the annotations' title, the names,
	// titles and descriptions of a tool's parameters at any depth (and
	// the values of string enums), a prompt's arguments, a resource's
	// name and MIME type.
	JSON json.RawMessage
}

// fields are a capability's texts, by field.
type fields [numFields][]string

// The fields a capability is searched by, each with its own weight (see
// weights). A server's name, prefix and instructions are searched apart,
// once per server.
const (
	fieldName   = iota // the original name, and a resource's name
	fieldTitle         // the title, and annotations.title
	fieldDesc          // the description
	fieldParams        // parameters (tools) and arguments (prompts): names, titles, descriptions, enum values
	numFields
)

// docFields reads the texts of d that are searched. It picks them from
// the JSON in one pass each, decoding only the strings it keeps: every
// capability of a catalog goes through here when it is first seen.
func docFields(d *Doc) fields {
	var f fields
	f[fieldName] = append(f[fieldName], d.Original)
	f[fieldTitle] = append(f[fieldTitle], d.Title)
	f[fieldDesc] = append(f[fieldDesc], d.Description)
	_ = rawjson.Members(d.JSON, func(key string, v []byte) bool {
		switch key {
		case "name":
			if s, ok := rawjson.String(v); ok && s != d.Original {
				f[fieldName] = append(f[fieldName], s) // a resource's name
			}
		case "mimeType":
			if s, ok := rawjson.String(v); ok {
				f[fieldParams] = append(f[fieldParams], s)
			}
		case "annotations":
			if t, err := rawjson.Get(v, "title"); err == nil {
				if s, ok := rawjson.String(t); ok && s != d.Title {
					f[fieldTitle] = append(f[fieldTitle], s)
				}
			}
		case "arguments":
			_ = rawjson.Elements(v, func(arg []byte) bool {
				_ = rawjson.Members(arg, func(k string, v []byte) bool {
					if k == "name" || k == "title" || k == "description" {
						if s, ok := rawjson.String(v); ok {
							f[fieldParams] = append(f[fieldParams], s)
						}
					}
					return true
				})
				return true
			})
		case "inputSchema":
			f[fieldParams] = schemaTexts(v, f[fieldParams], 0)
		}
		return true
	})
	return f
}

// maxSchemaDepth bounds how deep a schema is read: a server's schema is
// untrusted input.
const maxSchemaDepth = 16

// schemaTexts appends what a person reads in a JSON schema: property
// names, titles, descriptions and string enum values, at any depth.
func schemaTexts(v []byte, out []string, depth int) []string {
	if depth > maxSchemaDepth || len(v) == 0 {
		return out
	}
	if v[0] == '[' {
		_ = rawjson.Elements(v, func(e []byte) bool {
			out = schemaTexts(e, out, depth+1)
			return true
		})
		return out
	}
	_ = rawjson.Members(v, func(key string, v []byte) bool {
		switch key {
		case "title", "description":
			if s, ok := rawjson.String(v); ok {
				out = append(out, s)
			}
		case "enum":
			_ = rawjson.Elements(v, func(e []byte) bool {
				if s, ok := rawjson.String(e); ok {
					out = append(out, s)
				}
				return true
			})
		case "properties":
			_ = rawjson.Members(v, func(name string, p []byte) bool {
				out = append(out, name)
				out = schemaTexts(p, out, depth+1)
				return true
			})
		case "items", "additionalProperties", "anyOf", "oneOf", "allOf", "$defs", "definitions":
			if key == "$defs" || key == "definitions" {
				_ = rawjson.Members(v, func(_ string, p []byte) bool {
					out = schemaTexts(p, out, depth+1)
					return true
				})
			} else {
				out = schemaTexts(v, out, depth+1)
			}
		}
		return true
	})
	return out
}

// deprecated reports whether a capability says it should no longer be
// used: DEPRECATED in capitals, or the word at the start of its title or
// description, as a label ("Deprecated:", "(deprecated)", "[deprecated]")
// or in "is deprecated".
func deprecated(title, description string) bool {
	for _, s := range []string{title, description} {
		if strings.Contains(s, "DEPRECATED") {
			return true
		}
		l := strings.ToLower(strings.TrimLeft(s, " \t\r\n*_#[(-"))
		if strings.HasPrefix(l, "deprecated") {
			return true
		}
		for _, m := range []string{"deprecated:", "(deprecated", "[deprecated", "is deprecated", "now deprecated"} {
			if strings.Contains(l, m) {
				return true
			}
		}
	}
	return false
}
