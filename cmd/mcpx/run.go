package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/proxytool"
)

// maxScriptBytes bounds a script read from a file or stdin.
const maxScriptBytes = 1 << 20

func newRunCmd(ios *streams, g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "run <script.js | ->",
		Short: "Run a code-mode script against the catalog, as the proxy tool's run action does",
		Long: `Run a JavaScript script (the body of an async function) with the proxy's
verbs as globals: proxy.list, proxy.info, proxy.call and proxy.callAll,
and console.log. It prints the script's return value as JSON, then what
it logged. Every call the script makes is an ordinary call: filters,
profiles, pinning and the limits hold, and each is on the audit trail.
The limits are the config's code key (timeout, memory, maxCalls).

A call of a tool that may change something (see code.approve) is refused
unless --approve lets the script make it. The exit status is 1 when the
script fails (it throws, or breaks a limit), 2 for a usage error.`,
		Example: "  mcpx run count.js\n" +
			"  echo 'return (await proxy.list(\"read file\")).length' | mcpx run -\n" +
			"  mcpx run --approve cleanup.js",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := readScript(ios, args[0])
			if err != nil {
				return exitWith(ios, 2, err)
			}
			s, err := openFor(cmd.Context(), ios, g, nil)
			if err != nil {
				return err
			}
			defer s.close()
			params, _ := json.Marshal(map[string]string{"action": "run", "code": code})
			res, err := s.agg.CallTool(cmd.Context(), proxytool.Name, params)
			if err != nil {
				return fmt.Errorf("run %s: %w", args[0], err)
			}
			return callRender(ios, res, asJSON)
		},
	}
	cmd.Flags().BoolVar(&g.approve, "approve", false, "let the script call tools that may change something (code.approve) without asking")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the raw CallToolResult")
	return cmd
}

// readScript reads the script from a file, or from stdin for "-".
func readScript(ios *streams, name string) (string, error) {
	var r io.Reader = ios.In
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxScriptBytes+1))
	if err != nil {
		return "", fmt.Errorf("read the script: %w", err)
	}
	if len(b) > maxScriptBytes {
		return "", fmt.Errorf("the script %s is over %d bytes", name, maxScriptBytes)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("the script %s is empty", name)
	}
	return string(b), nil
}
