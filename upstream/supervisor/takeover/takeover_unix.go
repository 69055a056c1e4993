//go:build unix

package takeover

import (
	"os"

	"github.com/mcpx/mcpx/upstream/supervisor"
)

// init runs the supervisor, and never returns, in a process started as
// one (see the package documentation for why here and not in main).
func init() {
	if os.Getenv(supervisor.Env) != "1" {
		return
	}
	os.Unsetenv(supervisor.Env)
	os.Exit(supervisor.Run())
}
