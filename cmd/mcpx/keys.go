package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/config"
)

func newKeysCmd(ios *streams, g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Make, list and revoke the named API keys of serve --http",
		Long: `A named API key lets one person or agent into serve --http with an identity
of their own: the audit trail names them, and a key made with --profile sees
only that profile. The config keeps each key's SHA-256 under http.keys, never
the key; removing the entry revokes it, at the next request of a serve that
watches the file.`,
	}
	cmd.AddCommand(newKeysAddCmd(ios, g), newKeysListCmd(ios, g), newKeysRemoveCmd(ios, g))
	return cmd
}

func newKeysAddCmd(ios *streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME [--profile P]",
		Short: "Make a key, print it once and write its hash into the config",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			file, err := editTarget(g)
			if err != nil {
				return exitWith(ios, 2, err)
			}
			key, hash := config.NewAPIKey()
			if err := config.AddKey(file, args[0], hash, g.profile); err != nil {
				return editFailed(ios, err)
			}
			fmt.Fprintln(ios.Out, key)
			fmt.Fprintf(ios.Err, "added key %s (sees %s) to %s: it is shown this once; a client sends it as \"Authorization: Bearer <key>\"\n",
				args[0], keySees(config.APIKey{Profile: g.profile}), file)
			return nil
		},
	}
}

type keysListOptions struct{ json bool }

// keyJSON is a key as `mcpx keys list --json` shows it: never the hash.
type keyJSON struct {
	Name    string `json:"name"`
	Profile string `json:"profile,omitempty"`
}

func newKeysListCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &keysListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the named API keys and the profile each sees",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			opts := g.loadOptions()
			opts.Profile = "" // --profile names a key's profile, not the view
			cfg, err := config.Load(opts)
			if err != nil {
				return exitWith(ios, 2, err)
			}
			var keys []config.APIKey
			for _, k := range cfg.HTTP.Keys {
				if g.profile == "" || k.Profile == g.profile {
					keys = append(keys, k)
				}
			}
			if o.json {
				out := make([]keyJSON, 0, len(keys))
				for _, k := range keys {
					out = append(out, keyJSON{Name: k.Name, Profile: k.Profile})
				}
				enc := json.NewEncoder(ios.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			if len(keys) == 0 {
				fmt.Fprintln(ios.Err, "no keys (mcpx keys add NAME makes one)")
				return nil
			}
			tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSEES")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\n", k.Name, keySees(k))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON for scripts")
	return cmd
}

func newKeysRemoveCmd(ios *streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Revoke a key: remove it from the config",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			file, err := editTarget(g)
			if err != nil {
				return exitWith(ios, 2, err)
			}
			if err := config.RemoveKey(file, args[0]); err != nil {
				return editFailed(ios, err)
			}
			fmt.Fprintf(ios.Err, "removed key %s from %s: a serve that watches it refuses the key from its next request\n", args[0], file)
			return nil
		},
	}
}
