package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/upstream"
)

type listOptions struct {
	kind   string // tools, resources, prompts
	json   bool
	server string
	query  string
	tokens bool // add each entry's estimated token cost and the total
}

func newListCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &listOptions{}
	var serverURL string
	cmd := &cobra.Command{
		Use:   "list {tools|resources|prompts}",
		Short: "List the catalog's tools, resources (and templates) or prompts",
		Long: `List what every configured server offers, by the name mcpx exposes.
In a terminal the output is a table; in a pipe, tab-separated rows; with
--json, a JSON array of the MCP objects, each with an added "server" field.`,
		Example:   "  mcpx list tools\n  mcpx list tools --query echo\n  mcpx list resources --json\n  mcpx list prompts --server everything",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"tools", "resources", "prompts"},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.kind = strings.TrimSuffix(args[0], "s") + "s"
			switch o.kind {
			case "tools", "resources", "prompts":
			default:
				return usagef("list %q: want tools, resources or prompts", args[0])
			}
			if r := remoteFor(serverURL); r != nil {
				c, err := r.catalog(cmd.Context())
				if err != nil {
					return err
				}
				if err := checkServerName(catalogServers(c, nil), o.server); err != nil {
					return err
				}
				if err := listRun(ios, c, o); err != nil {
					return err
				}
				// As a local list does: a failed server is exit status 1.
				statuses, err := r.servers(cmd.Context())
				if err != nil {
					return err
				}
				return anyFailed(statuses, o.server)
			}
			s, err := openFor(cmd.Context(), ios, g, func(*aggregator.Aggregator) ([]string, bool) {
				if o.server != "" {
					return []string{o.server}, true // only the server listed is started
				}
				return nil, false
			})
			if err != nil {
				return err
			}
			defer s.close()
			c := s.agg.Catalog()
			if err := checkServerName(catalogServers(c, s.cfg), o.server); err != nil {
				return err
			}
			if err := listRun(ios, c, o); err != nil {
				return err
			}
			return anyFailed(s.agg.Upstreams(), o.server)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array of MCP objects, each with a \"server\" field")
	addServerURL(cmd, &serverURL)
	cmd.Flags().StringVar(&o.server, "server", "", "only this server's capabilities")
	cmd.Flags().BoolVar(&o.tokens, "tokens", false, "add each entry's estimated token cost (as the model reads its JSON) and the total")
	cmd.Flags().BoolVar(&g.cached, "cached", false, "read only the remembered catalogs: start no server")
	cmd.Flags().StringVarP(&o.query, "query", "q", "", "rank by a search over names, descriptions and parameters, best match first (as the proxy tool's list does)")
	return cmd
}

func listRun(ios *streams, c *aggregator.Catalog, o *listOptions) error {
	var entries []*aggregator.Entry
	switch o.kind {
	case "tools":
		entries = c.Tools
	case "resources":
		entries = append(append(entries, c.Resources...), c.ResourceTemplates...)
	case "prompts":
		entries = c.Prompts
	}
	if o.query != "" {
		entries = c.Rank(aggregator.Kind(strings.TrimSuffix(o.kind, "s")), o.query)
	}
	if o.server != "" {
		var kept []*aggregator.Entry
		for _, e := range entries {
			if e.Server == o.server {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if o.json {
		return printEntriesJSON(ios.Out, entries, o.tokens)
	}
	var header []string
	rows := make([][]string, 0, len(entries))
	for _, e := range entries {
		// A terminal shows the first line, cut to its width; a pipe gets
		// the whole description on one line, newlines escaped.
		desc := strings.TrimSpace(e.Description)
		if ios.OutTTY {
			desc = firstLine(desc)
		}
		switch o.kind {
		case "resources":
			header = []string{"URI", "SERVER", "NAME", "TITLE", "DESCRIPTION"}
			name, title := nameAndTitle(e)
			rows = append(rows, []string{e.Name, e.Server, name, title, desc})
		case "prompts":
			header = []string{"NAME", "SERVER", "ARGUMENTS", "DESCRIPTION"}
			rows = append(rows, []string{e.Name, e.Server, argumentList(e.JSON), desc})
		default:
			header = []string{"NAME", "SERVER", "DESCRIPTION"}
			rows = append(rows, []string{e.Name, e.Server, desc})
		}
	}
	if o.tokens {
		header, rows = addTokens(entries, header, rows)
	}
	if len(entries) == 0 && ios.OutTTY {
		fmt.Fprintf(ios.Err, "no %s\n", o.kind)
	}
	if err := printTable(ios.Out, ios.OutTTY, header, rows); err != nil {
		return err
	}
	if o.tokens {
		total := 0
		for _, e := range entries {
			total += estimateTokens(len(e.JSON))
		}
		// Not in the table: a script reading rows must not take it for one.
		fmt.Fprintf(ios.Err, "total: %d %s, about %d tokens\n", len(entries), o.kind, total)
	}
	return nil
}

// anyFailed is exit status 1 when a server listed from (server, or every
// one when "") failed: the list lacks its part. The session's close says
// which and why.
func anyFailed(statuses []upstream.Status, server string) error {
	for _, st := range statuses {
		if st.State == upstream.StateFailed && (server == "" || st.Name == server) {
			return exitError{1}
		}
	}
	return nil
}

// argumentList names a prompt's arguments, the optional ones in brackets:
// "city [state]".
func argumentList(prompt json.RawMessage) string {
	args := promptArgs(prompt)
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Name
		if !a.Required {
			names[i] = "[" + a.Name + "]"
		}
	}
	return strings.Join(names, " ")
}

// addTokens puts a TOKENS column after the name: each entry's estimated
// cost as a model reads its JSON.
func addTokens(entries []*aggregator.Entry, header []string, rows [][]string) ([]string, [][]string) {
	if len(header) == 0 {
		return header, rows
	}
	header = append([]string{header[0], "TOKENS"}, header[1:]...)
	for i, e := range entries {
		rows[i] = append([]string{rows[i][0], strconv.Itoa(estimateTokens(len(e.JSON)))}, rows[i][1:]...)
	}
	return header, rows
}

// nameAndTitle are a resource's name (what `mcpx read` takes, with its
// URI and title) and its title, "" when it has none or the same.
func nameAndTitle(e *aggregator.Entry) (name, title string) {
	var v struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(e.JSON, &v)
	if e.Title == v.Name {
		return v.Name, ""
	}
	return v.Name, e.Title
}

// printEntriesJSON prints the exposed objects as they are, each with the
// "server" it comes from added.
func printEntriesJSON(w io.Writer, entries []*aggregator.Entry, tokens bool) error {
	out := make([]json.RawMessage, 0, len(entries))
	for _, e := range entries {
		b, err := entryJSON(e, tokens)
		if err != nil {
			return err
		}
		out = append(out, b)
	}
	return printJSON(w, out)
}

// entryJSON is the exposed object with the "server" it comes from added
// (and its estimated token cost with tokens).
func entryJSON(e *aggregator.Entry, tokens bool) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(e.JSON, &m); err != nil {
		return nil, fmt.Errorf("%s %s: %w", e.Kind, e.Name, err)
	}
	m["server"], _ = json.Marshal(e.Server)
	if tokens {
		m["estimatedTokens"], _ = json.Marshal(estimateTokens(len(e.JSON)))
	}
	return json.Marshal(m)
}
