package aggregator

import "fmt"

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
}

func (f *Filtered) Error() string {
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
