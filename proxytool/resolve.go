package proxytool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// errNotFound means no capability answers to a path; each action words
// its own message.
var errNotFound = errors.New("not found")

// resolve finds the capability a path names:
//
//  1. for a resource, an exact URI or URI template;
//  2. the catalog's Lookup: the exposed name, or for a resource a URI that
//     a template matches;
//  3. for a resource, its "name" field;
//  4. the original (unprefixed) name.
//
// Steps 3 and 4 must be unambiguous: when several capabilities match, the
// error lists them so the model can pick one.
func (p *Proxy) resolve(kind Kind, path string) (Item, error) {
	var items []Item
	if kind == KindResource {
		items = p.c.Items(kind)
		for i := range items {
			if items[i].Name == path {
				return items[i], nil
			}
		}
	}
	if it, ok := p.c.Lookup(kind, path); ok {
		return it, nil
	}
	if items == nil {
		items = p.c.Items(kind)
	}
	if kind == KindResource {
		var named []Item
		for i := range items {
			if resourceName(items[i].JSON) == path {
				named = append(named, items[i])
			}
		}
		if it, err := unique(kind, "name", path, named); !errors.Is(err, errNotFound) {
			return it, err
		}
	}
	var orig []Item
	for i := range items {
		if items[i].Original == path {
			orig = append(orig, items[i])
		}
	}
	return unique(kind, "original name", path, orig)
}

// unique returns the one candidate, or an error saying there are none or
// several.
func unique(kind Kind, what, path string, candidates []Item) (Item, error) {
	switch len(candidates) {
	case 0:
		return Item{}, errNotFound
	case 1:
		return candidates[0], nil
	}
	const shownMax = 20
	var b strings.Builder
	plural := string(kind) + "s"
	use := "names"
	if kind == KindResource {
		use = "URIs"
	}
	fmt.Fprintf(&b, "%s '%s' is ambiguous: %d %s have that %s. Give one of their %s as 'path': ",
		kindTitle(kind), path, len(candidates), plural, what, use)
	for i, it := range candidates {
		if i == shownMax {
			fmt.Fprintf(&b, ", and %d more", len(candidates)-shownMax)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "'%s'", it.Name)
		if it.Server != "" {
			fmt.Fprintf(&b, " (server %s)", it.Server)
		}
	}
	return Item{}, errors.New(b.String())
}

// resourceName returns the "name" field of a resource or template object.
func resourceName(obj json.RawMessage) string {
	var v struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(obj, &v) != nil {
		return ""
	}
	return v.Name
}

// kindTitle is the kind as the start of a sentence: Tool, Resource, Prompt.
func kindTitle(kind Kind) string {
	switch kind {
	case KindTool:
		return "Tool"
	case KindResource:
		return "Resource"
	default:
		return "Prompt"
	}
}
