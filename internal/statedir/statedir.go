// Package statedir says where mcpx keeps what must outlive its cache: the
// audit trail and the pinned tool definitions.
package statedir

import (
	"os"
	"path/filepath"
)

// Dir is $XDG_STATE_HOME/mcpx, where $XDG_STATE_HOME defaults to
// ~/.local/state (a relative one is ignored, as the XDG spec says); ""
// when neither is known.
func Dir() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "mcpx")
}
