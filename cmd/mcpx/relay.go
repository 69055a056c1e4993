package main

import (
	"github.com/mcpx/mcpx/browser/relay"
	"github.com/spf13/cobra"
)

type relayOptions struct {
	listen       string
	extensionIDs []string
}

func newRelayCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &relayOptions{}
	cmd := &cobra.Command{
		Use:   "relay [--listen ADDR]",
		Short: "Run the browser relay alone, in the foreground",
		Long: `Host the local browser relay (the one "browser": {} uses) until
interrupted: the Chrome extension connects on /extension, and every mcpx
serve of this user joins it on /mcp with the secret kept in
~/.config/mcpx/relay-secret. Without it, the first mcpx serve hosts the
relay and the others join; with it running, they all join.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := relay.CheckLoopback(o.listen); err != nil {
				return exitWith(ios, 2, err) // a usage error, like any bad flag
			}
			level := g.logLevel
			if level == "" {
				level = "info"
			}
			logger, closeLog, err := newLogger(ios.Err, level, g.logFile, newRedactor(nil))
			if err != nil {
				return exitWith(ios, 2, err)
			}
			defer closeLog()
			logger.Info("browser relay: press Ctrl-C to stop", "extension", "ws://"+o.listen+"/extension")
			err = relay.Run(cmd.Context(), relay.LocalOptions{Addr: o.listen, ExtensionIDs: o.extensionIDs, Logger: slogger(logger)})
			if err != nil {
				return exitWith(ios, 1, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.listen, "listen", relay.DefaultAddr, "loopback address to listen on")
	cmd.Flags().StringSliceVar(&o.extensionIDs, "extension-id", nil, "admit only these extension ids on /extension (repeatable)")
	return cmd
}
