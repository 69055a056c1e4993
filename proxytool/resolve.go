package proxytool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound means no capability answers to a path; each caller words
// its own message.
var ErrNotFound = errors.New("not found")

// Finder is the part of a [Catalog] that name resolution needs.
type Finder interface {
	// Items returns every capability of a kind, in a stable order; for
	// KindResource the resources come first, then the templates. The
	// result must not be modified.
	Items(kind Kind) []Item
	// Lookup finds a capability by exposed name; for KindResource by URI,
	// matching templates too.
	Lookup(kind Kind, name string) (Item, bool)
}

// resolve finds the capability a path names, as [Resolve] does.
func (p *Proxy) resolve(kind Kind, path string) (Item, error) { return Resolve(p.c, kind, path) }

// Resolve finds the capability a path names, the way the proxy tool does,
// so that a terminal command finds what a model finds:
//
//  1. for a resource, an exact URI or URI template;
//  2. the catalog's Lookup: the exposed name, or for a resource a URI that
//     a template matches;
//  3. for a resource, its "name" field;
//  4. the original (unprefixed) name;
//  5. for a resource or a prompt, its title: what a client's picker and
//     `mcpx list resources` show a person.
//
// Steps 3 to 5 must be unambiguous: when several capabilities match, the
// error lists them so the model can pick one. Nothing found is
// [ErrNotFound].
func Resolve(c Finder, kind Kind, path string) (Item, error) {
	var items []Item
	if kind == KindResource {
		items = c.Items(kind)
		for i := range items {
			if items[i].Name == path {
				return items[i], nil
			}
		}
	}
	if it, ok := c.Lookup(kind, path); ok {
		return it, nil
	}
	if items == nil {
		items = c.Items(kind)
	}
	if kind == KindResource {
		var named []Item
		for i := range items {
			if resourceName(items[i].JSON) == path {
				named = append(named, items[i])
			}
		}
		if it, err := unique(kind, "name", path, named); !errors.Is(err, ErrNotFound) {
			return it, err
		}
	}
	var orig []Item
	for i := range items {
		if items[i].Original == path {
			orig = append(orig, items[i])
		}
	}
	if it, err := unique(kind, "original name", path, orig); !errors.Is(err, ErrNotFound) || kind == KindTool {
		return it, err
	}
	var titled []Item
	for i := range items {
		if items[i].Title == path {
			titled = append(titled, items[i])
		}
	}
	return unique(kind, "title", path, titled)
}

// unique returns the one candidate, or an error saying there are none
// ([ErrNotFound]) or several ([*AmbiguousError]).
func unique(kind Kind, what, path string, candidates []Item) (Item, error) {
	switch len(candidates) {
	case 0:
		return Item{}, ErrNotFound
	case 1:
		return candidates[0], nil
	}
	return Item{}, &AmbiguousError{Kind: kind, What: what, Path: path, Candidates: candidates}
}

// AmbiguousError is a path that several capabilities answer to by their
// original name (or a resource's name field). Its text tells a model how
// to pick one.
type AmbiguousError struct {
	Kind       Kind
	What       string // "original name", "name" or "title"
	Path       string
	Candidates []Item
}

func (e *AmbiguousError) Error() string {
	const shownMax = 20
	var b strings.Builder
	plural := string(e.Kind) + "s"
	use := "names"
	if e.Kind == KindResource {
		use = "URIs"
	}
	fmt.Fprintf(&b, "%s '%s' is ambiguous: %d %s have that %s. Give one of their %s as 'path': ",
		kindTitle(e.Kind), e.Path, len(e.Candidates), plural, e.What, use)
	for i, it := range e.Candidates {
		if i == shownMax {
			fmt.Fprintf(&b, ", and %d more", len(e.Candidates)-shownMax)
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
	return b.String()
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
