package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/config"
)

// version, commit and date are stamped by the release build.
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// exitError carries an exit status out of a command whose output has
// already said what went wrong.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// globalFlags are the flags every command shares.
type globalFlags struct {
	config    string
	logLevel  string
	logFile   string
	expose    string
	separator string
	profile   string
	cached    bool // list --cached: read only remembered catalogs
	approve   bool // run --approve: scripts may call tools that may write
}

// loadOptions are the config flags as config.Load takes them.
func (g *globalFlags) loadOptions() *config.LoadOptions {
	opts := &config.LoadOptions{File: g.config, Expose: g.expose, Profile: g.profile}
	if g.separator != "" {
		opts.Separator = &g.separator
	}
	return opts
}

func run(args []string, ios *streams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := newRootCmd(ios)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintln(ios.Err, "mcpx:", err)
		return 2
	case isUnknownCommand(cmd, args):
		fmt.Fprintln(ios.Err, "mcpx:", err)
		fmt.Fprintln(ios.Err, "Run 'mcpx --help' for the commands.")
		return 2
	default:
		fmt.Fprintln(ios.Err, "mcpx:", err)
		return 1
	}
}

func newRootCmd(ios *streams) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "mcpx",
		Short: "Many MCP servers as one",
		Long: `mcpx connects to many MCP servers (stdio children, streamable HTTP, SSE)
and shows them as one: to an MCP client over stdio (mcpx serve --stdio),
and to people and scripts (mcpx list, mcpx call, mcpx servers).

Exit status: 0 success; 1 a call failed, a tool reported an error or a
server failed; 2 a usage or config error (unknown command, flag, server or
name, arguments that are not JSON, a config that does not load); 130
interrupted.`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// The same line as `mcpx version`.
	root.SetVersionTemplate("mcpx {{.Version}}\n")
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.Err)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.config, "config", "c", "", "config file (else the first found of "+strings.TrimPrefix(config.SearchOrder, "--config FILE, ")+")")
	pf.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (default info for serve, warn otherwise)")
	pf.StringVar(&g.logFile, "log-file", "", "append logs to this file instead of stderr")
	pf.StringVar(&g.expose, "expose", "", "how upstreams are shown to a client: proxy, direct or both")
	pf.StringVar(&g.separator, "separator", "", "separator between prefix and name (default \"_\")")
	pf.StringVar(&g.profile, "profile", "", "show only this profile of the config (else $MCPX_PROFILE; default the whole catalog)")

	root.AddCommand(
		newServeCmd(ios, g),
		newListCmd(ios, g),
		newCallCmd(ios, g),
		newRunCmd(ios, g),
		newInfoCmd(ios, g),
		newReadCmd(ios, g),
		newGetCmd(ios, g),
		newServersCmd(ios, g),
		newRelayCmd(ios, g),
		newAuthCmd(ios, g),
		newAddCmd(ios, g),
		newRemoveCmd(ios, g),
		newEnableCmd(ios, g, true),
		newEnableCmd(ios, g, false),
		newDoctorCmd(ios, g),
		newLogCmd(ios),
		newTrustCmd(ios, g),
		newKeysCmd(ios, g),
		newVersionCmd(ios),
	)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// Now rather than in Execute, so that markUsageErrors sees it.
	root.InitDefaultCompletionCmd()
	markUsageErrors(root)
	addCompletions(root, g)
	return root
}

// markUsageErrors makes the argument checks of every command usage errors
// (exit status 2).
func markUsageErrors(cmd *cobra.Command) {
	if cmd.HasParent() && cmd.HasSubCommands() && !cmd.Runnable() {
		// A group (auth, completion): cobra would show its help and exit
		// 0 for a word that names none of its commands.
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], c.CommandPath())
			}
			return c.Help()
		}
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}

// isUnknownCommand reports whether args name no command: cobra's error
// for that has no type of its own.
func isUnknownCommand(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(args)
	return err != nil || c == nil
}

// versionString is the one line `mcpx version` and `mcpx --version` print
// after "mcpx ".
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(version, commit, date, info)
}

// formatVersion is the release build's stamp when there is one. A plain
// `go build` or `go install` binary is not stamped: Go's embedded build
// info then gives the module version and, for a build in a checkout, the
// VCS revision, its time and whether the tree had changes.
func formatVersion(version, commit, date string, info *debug.BuildInfo) string {
	var modified bool
	if version == "dev" && commit == "" && info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var extra []string
	for _, s := range []string{commit, date} {
		if s != "" {
			extra = append(extra, s)
		}
	}
	if modified {
		extra = append(extra, "modified")
	}
	if len(extra) == 0 {
		return version
	}
	return version + " (" + strings.Join(extra, ", ") + ")"
}

func newVersionCmd(ios *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mcpx's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(ios.Out, "mcpx", versionString())
			return nil
		},
	}
}
