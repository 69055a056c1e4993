package aggregator

import (
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/trust"
)

// Filtered is a tool or prompt a server offers that its allow/deny filter
// in the config keeps out of the catalog. As an error it says so, and it
// wraps [ErrUnknown]: the name is not served.
type Filtered struct {
	Kind     Kind
	Name     string // the name it would be exposed under
	Original string
	Server   string
	List     string // "allow" or "deny": the config list that keeps it out
	// Profile, when set, is the profile the session is shown through,
	// which leaves it out (List is then "").
	Profile string
	// Withheld, when set, says it is withheld by pinning (List is then
	// ""): its definition was added or changed since the user approved
	// the server's (see docs/trust.md).
	Withheld trust.Status
}

func (f *Filtered) Error() string {
	if f.Withheld != "" {
		why := "its definition changed since it was approved"
		if f.Withheld == trust.Added {
			why = "it is new since server " + f.Server + "'s tools were approved"
		}
		return fmt.Sprintf("%s %q is withheld: %s; run `mcpx trust %s` to review and approve it", f.Kind, f.Name, why, f.Server)
	}
	if f.Profile != "" {
		return fmt.Sprintf("%s %q is not in profile %s (profiles.%s in the config)", f.Kind, f.Name, f.Profile, f.Profile)
	}
	text := fmt.Sprintf("%s %q is filtered out by servers.%s.%ss.%s in the config", f.Kind, f.Name, f.Server, f.Kind, f.List)
	if f.List == "allow" {
		text += " (no pattern there matches it)"
	}
	return text
}

func (f *Filtered) Unwrap() error { return ErrUnknown }

// FilteredOut finds the tool or prompt a config filter keeps out that
// name stands for: its exposed name, or its server's own name when only
// one filtered capability of the kind has it. Nil: none.
func (c *Catalog) FilteredOut(kind Kind, name string) *Filtered {
	var byOriginal []*Filtered
	for _, f := range c.filtered {
		if f.Kind != kind {
			continue
		}
		if f.Name == name {
			return f
		}
		if f.Original == name {
			byOriginal = append(byOriginal, f)
		}
	}
	if len(byOriginal) == 1 {
		return byOriginal[0]
	}
	return nil
}

// withhold returns raws without the definitions review r withholds, each
// kept in c's filtered list to say why its name is not served.
func (c *Catalog) withhold(kind Kind, m *member, r *trust.Review, raws []json.RawMessage, sep string) []json.RawMessage {
	if r.WithheldCount() == 0 {
		return raws
	}
	tk := trust.Tool
	if kind == KindPrompt {
		tk = trust.Prompt
	}
	kept := make([]json.RawMessage, 0, len(raws))
	for _, raw := range raws {
		var original string
		if v, err := rawjson.Get(raw, "name"); err == nil {
			original, _ = rawjson.String(v)
		}
		change, ok := r.Withheld(tk, original)
		if !ok {
			kept = append(kept, raw)
			continue
		}
		name, _ := exposedName(m.prefix, sep, original)
		c.filtered = append(c.filtered, &Filtered{Kind: kind, Name: name, Original: original, Server: m.src.Name(), Withheld: change.Status})
	}
	return kept
}

// Withheld counts, per server, the tools and prompts withheld until
// `mcpx trust` approves them.
func (c *Catalog) Withheld() map[string]int {
	var out map[string]int
	for server, r := range c.Reviews {
		if n := r.WithheldCount(); n > 0 {
			if out == nil {
				out = map[string]int{}
			}
			out[server] = n
		}
	}
	return out
}
