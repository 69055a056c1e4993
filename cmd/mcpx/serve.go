package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newServeCmd(ios *streams, g *globalFlags) *cobra.Command {
	var stdio bool
	cmd := &cobra.Command{
		Use:   "serve --stdio",
		Short: "Serve the catalog as one MCP server on stdin/stdout (what an MCP client runs)",
		Long: `Serve every configured server as one MCP server over stdio. Stdout
carries JSON-RPC and nothing else; logs go to stderr or --log-file. mcpx
exits, taking every child server with it, when stdin closes or on SIGINT or
SIGTERM, within shutdownTimeout (default 5s) whatever a child or the
client is doing. The config file is watched: added servers start, removed
ones stop, changed ones restart, and the client is told with list_changed;
a file that does not parse is logged and the running config kept. SIGHUP
reloads as well.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !stdio {
				return errors.New("serve: only --stdio is supported")
			}
			s, err := open(cmd.Context(), ios, g, true)
			if err != nil {
				return err
			}
			stop, err := s.watchConfig(cmd.Context())
			if err != nil {
				s.shutdown()
				return err
			}
			s.log.Info("serving on stdio", "servers", len(s.cfg.Servers), "expose", s.cfg.Expose)
			err = s.agg.ServeStdio(cmd.Context(), ios.In, ios.Out)
			stop()
			s.shutdown()
			return err
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", true, "serve on stdin/stdout")
	return cmd
}
