// Command mcpx serves many MCP servers as one: an MCP client starts
// `mcpx serve --stdio`, and people and scripts use `mcpx list`, `mcpx call`
// and `mcpx servers` on the same catalog.
package main

import "os"

// mcpx re-runs itself once to supervise the child servers' process groups:
// that process never reaches main (see package upstream/supervisor).
func main() {
	os.Exit(run(os.Args[1:], systemStreams()))
}
