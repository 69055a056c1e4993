// Command mcpx serves many MCP servers as one: an MCP client starts
// `mcpx serve --stdio`, and people and scripts use `mcpx list`, `mcpx call`
// and `mcpx servers` on the same catalog.
package main

import (
	"os"

	"github.com/mcpx/mcpx/upstream"
)

func main() {
	// mcpx re-runs itself to supervise each child server's process group.
	if code, ok := upstream.MaybeSupervise(); ok {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], systemStreams()))
}
