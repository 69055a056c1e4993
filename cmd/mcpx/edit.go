package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/config"
)

// addOptions are the flags of `mcpx add`.
type addOptions struct {
	name      string
	command   []string // after --
	env       []string // K=V
	cwd       string
	url       string
	headers   []string // K=V
	transport string
	force     bool
}

func newAddCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &addOptions{}
	cmd := &cobra.Command{
		Use:   "add NAME (-- COMMAND [ARGS...] | --url URL)",
		Short: "Add a server to the config file",
		Long: `Add a server to the config file mcpx reads (--config, $MCPX_CONFIG,
./mcpx.json, or ~/.config/mcpx/config.json, created when there is none).
Every other key, server, comment and line of the file stays as it was; the
result is checked before it is written, and written atomically, so a running
mcpx serve picks it up whole.

Secrets are best passed as ${VAR} references, in single quotes so that the
shell leaves them alone: mcpx expands them when it loads the config. add
warns, and adds the server all the same, when its command is not on PATH
or a variable it refers to is not set here.`,
		Example: `  mcpx add everything -- npx -y @modelcontextprotocol/server-everything
  mcpx add github --env 'GITHUB_TOKEN=${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
  mcpx add remote --url https://example.com/mcp --header 'Authorization=Bearer ${TOKEN}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			switch {
			case len(args) == 0 || dash == 0:
				return errors.New("add: want a server NAME")
			case dash < 0 && len(args) > 1, dash > 1:
				return fmt.Errorf("add: unexpected %q: put the command after --", args[1])
			}
			o.name = args[0]
			if dash > 0 {
				o.command = args[dash:]
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			file, err := editTarget(g)
			if err != nil {
				return exitWith(ios, 2, err)
			}
			return addRun(ios, file, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.env, "env", nil, "`KEY=VALUE` for the server's environment (repeatable; VALUE may be '${VAR}')")
	f.StringVar(&o.cwd, "cwd", "", "working directory of the server's process")
	f.StringVar(&o.url, "url", "", "URL of a remote server (streamable HTTP, or SSE when it ends in /sse)")
	f.StringArrayVar(&o.headers, "header", nil, "`NAME=VALUE` HTTP header for a remote server (repeatable; VALUE may be '${VAR}')")
	f.StringVar(&o.transport, "transport", "", "http or sse, for a remote server whose URL does not say")
	f.BoolVar(&o.force, "force", false, "replace a server of the same name")
	return cmd
}

// editTarget is the file the editing commands change.
func editTarget(g *globalFlags) (string, error) {
	return config.EditTarget(&config.LoadOptions{File: g.config})
}

func addRun(ios *streams, file string, o *addOptions) error {
	e := config.Entry{Cwd: o.cwd, URL: o.url, Transport: o.transport}
	switch {
	case o.url != "" && len(o.command) > 0:
		return exitWith(ios, 2, errors.New("add: give either a command after -- or --url, not both"))
	case o.url == "" && len(o.command) == 0:
		return exitWith(ios, 2, errors.New("add: give the server's command after --, or --url"))
	case o.url != "" && (len(o.env) > 0 || o.cwd != ""):
		return exitWith(ios, 2, errors.New("add: --env and --cwd are for a command, not a --url server"))
	case o.url == "" && (len(o.headers) > 0 || o.transport != ""):
		return exitWith(ios, 2, errors.New("add: --header and --transport are for a --url server"))
	}
	if len(o.command) > 0 {
		e.Command, e.Args = o.command[0], o.command[1:]
	}
	var err error
	if e.Env, err = pairs("--env", o.env); err != nil {
		return exitWith(ios, 2, err)
	}
	if e.Headers, err = pairs("--header", o.headers); err != nil {
		return exitWith(ios, 2, err)
	}
	if err := config.AddServer(file, o.name, e, o.force); err != nil {
		return editFailed(ios, err)
	}
	fmt.Fprintf(ios.Err, "added server %s to %s\n", o.name, file)
	for _, kv := range slices.Concat(o.env, o.headers) {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) >= minSecretLen && !strings.Contains(v, "${") {
			// The value is not repeated: it may be a secret.
			fmt.Fprintf(ios.Err, "note: the value of %s is written to %s as it is; '${VAR}' keeps it in the environment instead\n", k, file)
		}
	}
	for _, w := range addWarnings(file, o.name, e) {
		fmt.Fprintln(ios.Err, "warning:", w)
	}
	return nil
}

// addWarnings says what would keep a server just added from starting,
// where this shell can tell: a command not on PATH, a ${VAR} that is not
// set. The server is added all the same: the command may be installed
// later, and the variable may be set only where mcpx runs.
func addWarnings(file, name string, e config.Entry) []string {
	var out []string
	if e.Command != "" {
		checkCommand(config.Server{Command: e.Command, Cwd: e.Cwd}, func(level, format string, args ...any) {
			if level == "error" {
				out = append(out, fmt.Sprintf(format, args...)+": the server will fail to start until it is installed")
			}
		})
	}
	// The file as mcpx will read it, with this environment: the server's
	// Problem names each unset variable and where it is used, never a value.
	cfg, err := config.Load(&config.LoadOptions{File: file})
	if err != nil {
		return out
	}
	for _, s := range cfg.Servers {
		if s.Name == name && s.Problem != "" {
			out = append(out, s.Problem+" here: the server will not start where it is not set either (an MCP client started from a GUI often lacks shell variables)")
		}
	}
	return out
}

// editFailed prints the error of an editing command and exits 1 when the
// file could not be written, 2 for a name or a file the user must fix (a
// name that exists or does not, a config that does not load).
func editFailed(ios *streams, err error) error {
	if errors.Is(err, config.ErrWrite) {
		return exitWith(ios, 1, err)
	}
	return exitWith(ios, 2, err)
}

// pairs parses KEY=VALUE flags. Error messages never repeat a value.
func pairs(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: want KEY=VALUE (argument %d)", flag, len(m)+1)
		}
		m[k] = v
	}
	return m, nil
}

func newRemoveCmd(ios *streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a server from the config file",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			file, err := editTarget(g)
			if err != nil {
				return exitWith(ios, 2, err)
			}
			if err := config.RemoveServer(file, args[0]); err != nil {
				return editFailed(ios, err)
			}
			fmt.Fprintf(ios.Err, "removed server %s from %s\n", args[0], file)
			return nil
		},
	}
}

func newEnableCmd(ios *streams, g *globalFlags, enable bool) *cobra.Command {
	verb := map[bool]string{true: "enable", false: "disable"}[enable]
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " a server in the config file",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			file, err := editTarget(g)
			if err != nil {
				return exitWith(ios, 2, err)
			}
			if err := config.SetEnabled(file, args[0], enable); err != nil {
				return editFailed(ios, err)
			}
			fmt.Fprintf(ios.Err, "%sd server %s in %s\n", verb, args[0], file)
			return nil
		},
	}
}
