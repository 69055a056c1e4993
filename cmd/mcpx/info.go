package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/proxytool"
)

type infoOptions struct {
	name string
	json bool
}

func newInfoCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &infoOptions{}
	cmd := &cobra.Command{
		Use:   "info <tool|prompt|resource URI>",
		Short: "Show one tool, prompt or resource: its description and arguments",
		Long: `Show what one capability is: a tool's description and its arguments (name,
type, required, description), a prompt's arguments, a resource's or
template's metadata. The name is resolved as the proxy tool resolves it:
the exposed name, a resource's URI or name, or a server's own name for it
when only one server has that name. --json prints the MCP object with an
added "server" field.`,
		Example: "  mcpx info everything_echo\n  mcpx info echo --json\n  mcpx info demo://resource/static/document/features.md",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			s, err := openFor(cmd.Context(), ios, g, func(a *aggregator.Aggregator) ([]string, bool) {
				return a.Owners(o.name, proxytool.KindTool, proxytool.KindPrompt, proxytool.KindResource)
			})
			if err != nil {
				return err
			}
			defer s.close()
			e, err := findAnyKind(s.agg.Catalog(), o.name)
			if err != nil {
				return err
			}
			return infoRun(ios, e, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the MCP object with a \"server\" field")
	return cmd
}

// findAnyKind resolves name as a tool, else a prompt, else a resource.
// Not found at all, the closest names of every kind are offered.
func findAnyKind(c *aggregator.Catalog, name string) (*aggregator.Entry, error) {
	kinds := []proxytool.Kind{proxytool.KindTool, proxytool.KindPrompt, proxytool.KindResource}
	for _, k := range kinds {
		if _, err := c.Find(k, name); err == nil || !isNotFound(err) {
			return findEntry(c, k, name)
		}
	}
	for _, k := range kinds {
		if f := c.FilteredOut(aggregator.Kind(k), name); f != nil {
			return nil, usageError{f}
		}
	}
	var items []proxytool.Item
	for _, k := range kinds {
		items = append(items, c.Items(k)...)
	}
	return nil, usagef("no tool, prompt or resource %q%s", name, suggest(items, name, "`mcpx list tools` lists the tools"))
}

func infoRun(ios *streams, e *aggregator.Entry, o *infoOptions) error {
	if o.json {
		obj, err := entryJSON(e, false)
		if err != nil {
			return err
		}
		return printJSON(ios.Out, obj)
	}
	w := ios.Out
	head := fmt.Sprintf("%s: %s of server %s", e.Name, e.Kind, e.Server)
	if e.Original != e.Name && e.Kind != aggregator.KindResource && e.Kind != aggregator.KindTemplate {
		head += fmt.Sprintf(" (its own name: %s)", e.Original)
	}
	fmt.Fprintln(w, escapeControls(head, ""))
	if e.Title != "" {
		fmt.Fprintln(w, escapeControls(e.Title, "\n"))
	}
	if d := strings.TrimSpace(e.Description); d != "" {
		// The whole description: newlines are kept, other controls shown.
		fmt.Fprintln(w, escapeControls(d, "\n"))
	}
	if e.Overridden {
		printOwnText(w, e)
	}
	switch e.Kind {
	case aggregator.KindTool:
		return printToolArgs(ios, e.JSON)
	case aggregator.KindPrompt:
		return printPromptArgs(ios, e.JSON)
	default:
		return printResourceMeta(ios, e.JSON)
	}
}

// schemaProperty is the part of a JSON Schema property that a table shows.
type schemaProperty struct {
	Type        json.RawMessage            `json:"type"`
	Description string                     `json:"description"`
	Enum        []any                      `json:"enum"`
	Default     json.RawMessage            `json:"default"`
	Items       json.RawMessage            `json:"items"`
	Properties  map[string]json.RawMessage `json:"properties"`
	Required    []string                   `json:"required"`
}

// decodeProperty reads a property's schema; one that does not decode
// (an upstream's schema may be anything) shows as type "any".
func decodeProperty(raw json.RawMessage) schemaProperty {
	var p schemaProperty
	if json.Unmarshal(raw, &p) != nil {
		return schemaProperty{}
	}
	return p
}

// item is the schema of an array's items, when it is one schema (not a
// tuple's list).
func (p schemaProperty) item() (schemaProperty, bool) {
	if len(p.Items) == 0 || p.Items[0] != '{' {
		return schemaProperty{}, false
	}
	return decodeProperty(p.Items), true
}

func printToolArgs(ios *streams, tool json.RawMessage) error {
	var t struct {
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(tool, &t); err != nil {
		return fmt.Errorf("the tool's object: %w", err)
	}
	if len(t.InputSchema.Properties) == 0 {
		fmt.Fprintln(ios.Out, "\nNo arguments.")
		return nil
	}
	rows := argRows(t.InputSchema.Properties, t.InputSchema.Required, "", 1)
	fmt.Fprintln(ios.Out)
	return printWrappedTable(ios.Out, ios.OutTTY, []string{"ARGUMENT", "TYPE", "REQUIRED", "DESCRIPTION"}, rows)
}

// maxArgDepth bounds how deep info shows the fields of nested objects: an
// upstream's schema may nest as deep as it likes.
const maxArgDepth = 4

// argRows are the table rows of an object schema's properties, required
// ones first, then by name. Each is followed by the fields of its value
// when that is an object ("options.depth") or an array of objects
// ("entities[].name"), whose REQUIRED says whether the field is required
// in its own object.
func argRows(props map[string]json.RawMessage, required []string, prefix string, depth int) [][]string {
	names := slices.Collect(maps.Keys(props))
	slices.SortFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(required, a), slices.Contains(required, b)
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	rows := make([][]string, 0, len(names))
	for _, n := range names {
		p := decodeProperty(props[n])
		rows = append(rows, []string{prefix + n, schemaType(p), yesNo(slices.Contains(required, n)), describe(p)})
		if depth >= maxArgDepth {
			continue
		}
		if fields, req, under := nestedFields(p, prefix+n); len(fields) > 0 {
			rows = append(rows, argRows(fields, req, under, depth+1)...)
		}
	}
	return rows
}

// nestedFields are the fields shown under the property name: an object's
// own, or those of an array's object items; with the prefix of their
// rows.
func nestedFields(p schemaProperty, name string) (map[string]json.RawMessage, []string, string) {
	if len(p.Properties) > 0 {
		return p.Properties, p.Required, name + "."
	}
	if it, ok := p.item(); ok && len(it.Properties) > 0 {
		return it.Properties, it.Required, name + "[]."
	}
	return nil, nil, ""
}

// describe is a property's description with its enum and default.
func describe(p schemaProperty) string {
	desc := p.Description
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			b, _ := json.Marshal(v)
			vals[i] = string(b)
		}
		desc = strings.TrimSpace(desc + " (one of " + strings.Join(vals, ", ") + ")")
	}
	if len(p.Default) > 0 {
		desc = strings.TrimSpace(desc + " (default " + string(p.Default) + ")")
	}
	return desc
}

// schemaType names a property's JSON Schema type: "string", "integer|null",
// "string[]", "object[]"; "enum" or "any" when there is no type.
func schemaType(p schemaProperty) string {
	t := typeNames(p.Type)
	if it, ok := p.item(); t == "array" && ok {
		if name := typeNames(it.Type); name != "" {
			return name + "[]"
		}
	}
	switch {
	case t != "":
		return t
	case len(p.Enum) > 0:
		return "enum"
	default:
		return "any"
	}
}

// typeNames reads a schema "type": one name or a list joined with "|".
func typeNames(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return strings.Join(many, "|")
	}
	return ""
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// promptArgument is one argument of an MCP prompt.
type promptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

func promptArgs(prompt json.RawMessage) []promptArgument {
	var p struct {
		Arguments []promptArgument `json:"arguments"`
	}
	_ = json.Unmarshal(prompt, &p)
	return p.Arguments
}

func printPromptArgs(ios *streams, prompt json.RawMessage) error {
	args := promptArgs(prompt)
	if len(args) == 0 {
		fmt.Fprintln(ios.Out, "\nNo arguments.")
		return nil
	}
	rows := make([][]string, 0, len(args))
	for _, a := range args {
		rows = append(rows, []string{a.Name, yesNo(a.Required), a.Description})
	}
	fmt.Fprintln(ios.Out)
	return printWrappedTable(ios.Out, ios.OutTTY, []string{"ARGUMENT", "REQUIRED", "DESCRIPTION"}, rows)
}

// printResourceMeta shows a resource's or template's fields other than
// the name and description already shown, in a fixed order.
func printResourceMeta(ios *streams, obj json.RawMessage) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		return fmt.Errorf("the resource's object: %w", err)
	}
	fmt.Fprintln(ios.Out)
	var rows [][]string
	for _, k := range []string{"uri", "uriTemplate", "name", "mimeType", "size", "annotations", "_meta"} {
		raw, ok := fields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		rows = append(rows, []string{k, s})
	}
	return printWrappedTable(ios.Out, ios.OutTTY, []string{"FIELD", "VALUE"}, rows)
}

func isNotFound(err error) bool { return errors.Is(err, proxytool.ErrNotFound) }

// printOwnText shows, for a capability an override in the config
// rewrote, what the server itself says of it.
func printOwnText(w io.Writer, e *aggregator.Entry) {
	var own struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(e.Own, &own) // it decoded when the override was applied
	fmt.Fprintf(w, "Rewritten by servers.%s.%ss.override.%s in the config; the server's own text:\n",
		escapeControls(e.Server, ""), e.Kind, escapeControls(e.Original, ""))
	if own.Title != "" {
		fmt.Fprintln(w, "  "+escapeControls(own.Title, ""))
	}
	if d := strings.TrimSpace(own.Description); d != "" {
		fmt.Fprintln(w, "  "+escapeControls(d, "\n"))
	}
}
