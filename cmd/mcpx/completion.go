package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// addCompletions completes the names commands take: tools, prompts and
// resources from a running mcpx (MCPX_SERVER_URL) or the remembered
// catalogs (the ones `list --cached` shows), servers from the config. Completing never starts a server or waits for
// one: a server never connected has nothing to offer yet.
func addCompletions(root *cobra.Command, g *globalFlags) {
	names := func(kinds ...proxytool.Kind) cobra.CompletionFunc {
		return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return catalogCompletions(cmd.Context(), g, toComplete, kinds), cobra.ShellCompDirectiveNoFileComp
		}
	}
	servers := func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return serverCompletions(g, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	firstServer := func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return servers(cmd, args, toComplete)
	}
	for path, f := range map[string]cobra.CompletionFunc{
		"call":        names(proxytool.KindTool),
		"info":        names(proxytool.KindTool, proxytool.KindPrompt, proxytool.KindResource),
		"get":         names(proxytool.KindPrompt),
		"read":        names(proxytool.KindResource),
		"servers":     firstServer,
		"enable":      firstServer,
		"disable":     firstServer,
		"remove":      firstServer,
		"auth login":  firstServer,
		"auth logout": firstServer,
		"keys remove": keyNames(g),
	} {
		if cmd, _, err := root.Find(strings.Fields(path)); err == nil && cmd.Name() == strings.Fields(path)[len(strings.Fields(path))-1] {
			cmd.ValidArgsFunction = f
		}
	}
	if list, _, err := root.Find([]string{"list"}); err == nil {
		_ = list.RegisterFlagCompletionFunc("server", servers)
	}
}

// completionConfig loads the config as open does, or nil. The recursion
// guard is part of it: the environment it gives each server is part of
// the key its catalog is remembered under.
func completionConfig(g *globalFlags) *config.Config {
	cfg, err := config.Load(g.loadOptions())
	if err != nil {
		return nil
	}
	self, _ := os.Executable()
	guardRecursion(cfg, currentDepth(os.LookupEnv), self)
	return cfg
}

func serverCompletions(g *globalFlags, prefix string) []cobra.Completion {
	cfg := completionConfig(g)
	if cfg == nil {
		return nil
	}
	var out []cobra.Completion
	for _, s := range cfg.Servers {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, cobra.CompletionWithDesc(s.Name, string(s.Transport)))
		}
	}
	return out
}

// keyNames completes the first argument with the names of http.keys.
func keyNames(g *globalFlags) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg := completionConfig(g)
		if cfg == nil || len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, k := range cfg.HTTP.Keys {
			if strings.HasPrefix(k.Name, prefix) {
				out = append(out, cobra.CompletionWithDesc(k.Name, keySees(k)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// keySees is what a key sees, as keys list says it.
func keySees(k config.APIKey) string {
	if k.Profile == "" {
		return "everything"
	}
	return "profile " + k.Profile
}

// completionTimeout bounds how long completion asks a running mcpx
// (MCPX_SERVER_URL) for its catalog.
const completionTimeout = time.Second

// catalogCompletions lists the exposed names of the kinds that start with
// prefix: from the running mcpx that MCPX_SERVER_URL names, else from
// the remembered catalogs only.
func catalogCompletions(ctx context.Context, g *globalFlags, prefix string, kinds []proxytool.Kind) []cobra.Completion {
	c := completionCatalog(ctx, g)
	if c == nil {
		return nil
	}
	var out []cobra.Completion
	for _, k := range kinds {
		lists := map[proxytool.Kind][][]*aggregator.Entry{
			proxytool.KindTool:     {c.Tools},
			proxytool.KindPrompt:   {c.Prompts},
			proxytool.KindResource: {c.Resources, c.ResourceTemplates},
		}[k]
		for _, l := range lists {
			for _, e := range l {
				if strings.HasPrefix(e.Name, prefix) {
					out = append(out, cobra.CompletionWithDesc(e.Name, escapeControls(firstLine(e.Description), "")))
				}
			}
		}
	}
	return out
}

func completionCatalog(ctx context.Context, g *globalFlags) *aggregator.Catalog {
	if r := remoteFor(""); r != nil {
		ctx, cancel := context.WithTimeout(ctx, completionTimeout)
		defer cancel()
		c, err := r.catalog(ctx)
		if err != nil {
			return nil
		}
		return c
	}
	cfg := completionConfig(g)
	if cfg == nil {
		return nil
	}
	cfg.Browser = nil // its tools are the browser's live pages: nothing remembered
	agg := aggregator.New(cfg, &aggregator.Options{
		Upstream: upstream.Options{CacheDir: upstream.DefaultCacheDir(), Offline: true},
	})
	// Offline upstreams are ready as soon as they have read their
	// remembered catalogs: nothing here waits for a server.
	agg.Start(ctx)
	defer agg.Close()
	if agg.WaitReady(ctx) != nil {
		return nil
	}
	return agg.Catalog()
}
