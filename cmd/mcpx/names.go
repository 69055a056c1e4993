package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/proxytool"
)

// usageError is a command line mcpx cannot act on: an unknown command,
// flag, server or name, or arguments that are not JSON. It exits with
// status 2, apart from a call that failed (1).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// findEntry resolves a name the way the proxy tool does: the exposed name,
// a resource's URI (or a template's match) or name, or a source's own
// name when only one capability has it. Otherwise it is a usage error
// that says which config filter keeps it out, or offers the closest names.
func findEntry(c *aggregator.Catalog, kind proxytool.Kind, name string) (*aggregator.Entry, error) {
	e, err := c.Find(kind, name)
	if f := c.FilteredOut(aggregator.Kind(kind), name); errors.Is(err, proxytool.ErrNotFound) && f != nil {
		return nil, usageError{f}
	}
	if errors.Is(err, proxytool.ErrNotFound) {
		return nil, usagef("unknown %s %q%s", kind, name, didYouMean(c, kind, name))
	}
	return e, ambiguous(kind, name, err)
}

// ambiguous words an error of a name several capabilities have for a
// person; other errors pass as they are.
func ambiguous(kind proxytool.Kind, name string, err error) error {
	var amb *proxytool.AmbiguousError
	if !errors.As(err, &amb) {
		return err
	}
	names := make([]string, len(amb.Candidates))
	for i, it := range amb.Candidates {
		names[i] = fmt.Sprintf("%s (server %s)", it.Name, it.Server)
	}
	return usagef("%s %q is ambiguous: %s; give the full name", kind, name, strings.Join(names, ", "))
}

// didYouMean names the closest names to one not found, or says how to
// list them, as the end of a sentence.
func didYouMean(c *aggregator.Catalog, kind proxytool.Kind, name string) string {
	return suggest(c.Items(kind), name, fmt.Sprintf("`mcpx list %ss` lists them", kind))
}

// suggest is "; did you mean A, B?" with the items closest to name, or
// otherwise in parentheses when none is close.
func suggest(items []proxytool.Item, name, otherwise string) string {
	closest := proxytool.Closest(items, name, 3)
	if len(closest) == 0 {
		return " (" + otherwise + ")"
	}
	names := make([]string, len(closest))
	for i, it := range closest {
		names[i] = it.Name
	}
	return "; did you mean " + strings.Join(names, ", ") + "?"
}

// catalogServers names the servers in the config (when there is one) and
// in the catalog (mcpx's own tools too), in that order.
func catalogServers(c *aggregator.Catalog, cfg *config.Config) []string {
	var names []string
	if cfg != nil {
		for _, sv := range cfg.Servers {
			names = append(names, sv.Name)
		}
	}
	for _, l := range [][]*aggregator.Entry{c.Tools, c.Prompts, c.Resources, c.ResourceTemplates} {
		for _, e := range l {
			if !slices.Contains(names, e.Server) {
				names = append(names, e.Server)
			}
		}
	}
	return names
}

// checkServerName is a usage error unless server is "" or one of names.
func checkServerName(names []string, server string) error {
	if server == "" || slices.Contains(names, server) {
		return nil
	}
	if len(names) == 0 {
		return usagef("no server %q: the config has no servers", server)
	}
	return usagef("no server %q; the servers are %s", server, strings.Join(names, ", "))
}
