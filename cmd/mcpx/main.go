// Command mcpx serves many MCP servers as one: an MCP client starts
// `mcpx serve --stdio`, and people and scripts use `mcpx list`, `mcpx call`
// and `mcpx servers` on the same catalog.
package main

import (
	"os"

	// mcpx re-runs itself once to supervise the child servers' process
	// groups. In that process takeover's initialisation runs the
	// supervisor before the rest of mcpx initialises, and main is never
	// reached (see package takeover for why it cannot wait for main).
	_ "github.com/mcpx/mcpx/upstream/supervisor/takeover"
)

func main() {
	os.Exit(run(os.Args[1:], systemStreams()))
}
