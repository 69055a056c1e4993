package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/hidden"
	"github.com/mcpx/mcpx/trust"
	"github.com/mcpx/mcpx/upstream"
)

type trustOptions struct {
	yes, json bool
}

func newTrustCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &trustOptions{}
	cmd := &cobra.Command{
		Use:   "trust [SERVER]",
		Short: "Show the tools and prompts a server changed or added since you approved it, and approve them",
		Long: `mcpx pins what each server's tools and prompts say (name, title,
description, schemas, annotations) the first time it sees them. A tool or
prompt changed or added since is withheld from clients until approved here.

trust starts the server (with no SERVER: every server), shows what changed
against what was approved, with warnings about hidden text and phrases
aimed at the model, and asks to approve it. --yes approves without asking;
without a terminal, --yes is needed. --json prints the changes as JSON and
approves them only with --yes.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return trustRun(cmd, ios, g, o, args)
		},
	}
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "approve without asking")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the changes as JSON")
	return cmd
}

// trustEntry is one server in `mcpx trust --json`.
type trustEntry struct {
	Server   string       `json:"server"`
	Mode     trust.Mode   `json:"mode"`
	Changes  []trust.Diff `json:"changes"`
	Approved bool         `json:"approved"`

	review *trust.Review
}

func trustRun(cmd *cobra.Command, ios *streams, g *globalFlags, o *trustOptions, args []string) error {
	var needed owners // nil: every server
	if len(args) == 1 {
		name := args[0]
		needed = func(*aggregator.Aggregator) ([]string, bool) { return []string{name}, true }
	}
	s, err := openFor(cmd.Context(), ios, g, needed)
	if err != nil {
		return err
	}
	defer s.close()
	if s.pins == nil {
		return fmt.Errorf("nothing is pinned: trust is off for every server, or there is no home or XDG_STATE_HOME directory to keep pins in")
	}
	var names []string
	for _, srv := range s.cfg.Servers {
		names = append(names, srv.Name)
	}
	if len(args) == 1 {
		if !slices.Contains(names, args[0]) {
			return usagef("unknown server %q%s", args[0], suggestServer(args[0], names))
		}
		if s.cfg.TrustOf(s.cfg.Servers[slices.Index(names, args[0])]) == config.TrustOff {
			return usagef("server %s has trust off in the config: nothing of it is pinned", args[0])
		}
		names = args
		for _, st := range s.agg.Upstreams() {
			if st.Name == args[0] && st.State != upstream.StateConnected {
				// Its lists are unknown: "nothing changed" would be a guess.
				// Why is said by close, with the other commands' words.
				return fmt.Errorf("server %s is not connected: what it lists now is unknown, so nothing can be compared or approved", st.Name)
			}
		}
	}
	cat := s.agg.Catalog()
	var entries []*trustEntry
	for _, name := range names {
		r := cat.Reviews[name]
		if r.Pending() == 0 && !(len(args) == 1 && hasChanges(r)) {
			continue
		}
		entries = append(entries, &trustEntry{Server: name, Mode: r.Mode, Changes: r.Diffs(cat.ToolNames()), review: r})
	}
	if !o.json {
		if len(entries) == 0 {
			fmt.Fprintln(ios.Out, nothingPending(args))
			return nil
		}
		for _, e := range entries {
			printTrustEntry(ios.Out, e, s.pins.Pinned(e.Server))
		}
	}
	approve := o.yes
	if !approve && !o.json && len(entries) > 0 {
		if !ios.InTTY {
			fmt.Fprintln(ios.Err, "mcpx: not approved: pass --yes to approve without a terminal")
			return exitError{1}
		}
		approve = confirm(ios, entries)
	}
	if approve {
		for _, e := range entries {
			if err := s.agg.Approve(e.review); err != nil {
				return err
			}
			e.Approved = true
			if !o.json {
				fmt.Fprintf(ios.Out, "approved: server %s\n", e.Server)
			}
		}
	}
	if o.json {
		if entries == nil {
			entries = []*trustEntry{}
		}
		return printJSON(ios.Out, entries)
	}
	if !approve {
		fmt.Fprintln(ios.Out, "not approved")
	}
	return nil
}

// hasChanges reports whether r has any change, removals included: a
// server named on the command line shows even those.
func hasChanges(r *trust.Review) bool { return r != nil && len(r.Changes) > 0 }

func nothingPending(args []string) string {
	if len(args) == 1 {
		return "server " + args[0] + ": nothing changed since approved"
	}
	return "nothing changed since approved"
}

// suggestServer is "; did you mean X?" for the configured name closest
// to name, or "".
func suggestServer(name string, names []string) string {
	if near := config.ClosestName(name, names); near != "" {
		return "; did you mean " + near + "?"
	}
	return ""
}

// confirm asks on the terminal whether to approve; only "y" or "yes"
// approves.
func confirm(ios *streams, entries []*trustEntry) bool {
	servers := make([]string, len(entries))
	for i, e := range entries {
		servers[i] = e.Server
	}
	fmt.Fprintf(ios.Err, "Approve these changes to %s? [y/N] ", strings.Join(servers, ", "))
	line, _ := bufio.NewReader(ios.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

var statusMark = map[trust.Status]string{trust.Added: "+", trust.Changed: "~", trust.Removed: "-"}

// printTrustEntry renders one server's changes for a person. Every text
// goes through visible: what a server wrote must not drive the terminal,
// and hidden characters are the point of the review.
func printTrustEntry(w io.Writer, e *trustEntry, pins *trust.Pins) {
	since := ""
	if pins != nil && !pins.Approved.IsZero() {
		since = " since approved " + pins.Approved.Local().Format("2006-01-02 15:04")
	}
	fmt.Fprintf(w, "server %s: %d change(s)%s (trust %s)\n", e.Server, len(e.Changes), since, e.Mode)
	for _, d := range e.Changes {
		fmt.Fprintf(w, "  %s %s %s: %s\n", statusMark[d.Status], d.Kind, visible(d.Name), d.Status)
		for _, f := range d.Fields {
			fmt.Fprintf(w, "      %s:\n", f.Field)
			if d.Status == trust.Changed || d.Status == trust.Removed {
				printText(w, "        - ", f.Old)
			}
			if d.Status != trust.Removed {
				printText(w, "        + ", f.New)
			}
		}
		for _, sd := range d.Schemas {
			fmt.Fprintf(w, "      %s:%s\n", sd.Field, schemaLine(sd))
			for _, f := range sd.Texts {
				fmt.Fprintf(w, "        %s:\n", visible(f.Field))
				printText(w, "          - ", f.Old)
				printText(w, "          + ", f.New)
			}
		}
		for _, f := range d.Flags {
			fmt.Fprintf(w, "      ! %s\n", visible(f))
		}
	}
}

// printText prints a text under a prefix, one line of it per line.
func printText(w io.Writer, prefix, text string) {
	if text == "" {
		fmt.Fprintln(w, prefix+"(none)")
		return
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintln(w, prefix+visible(line))
	}
}

// schemaLine says what changed in a schema.
func schemaLine(d trust.SchemaDiff) string { return " " + d.Summary() }

// visible shows each character a person could not see, or that would
// drive the terminal, as <U+XXXX>.
func visible(s string) string { return hidden.Visible(s) }
