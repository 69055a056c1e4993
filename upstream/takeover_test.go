//go:build unix

package upstream_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/upstream"
	"github.com/mcpx/mcpx/upstream/supervisor"
	// The test binary is its Clients' supervisor (Options.Supervisor
	// defaults to the running executable), so it takes over as mcpx does.
	_ "github.com/mcpx/mcpx/upstream/supervisor/takeover"
)

// TestNotTakenOverStartsNothing: a process started as the supervisor that
// runs as a program (its binary lacks the takeover import) starts no
// supervisor of its own, which would run the binary again, and that one
// again: its stdio servers fail, and the error says what is missing.
func TestNotTakenOverStartsNothing(t *testing.T) {
	t.Setenv(supervisor.Env, "1")
	opts := fastOptions()
	// A supervisor path of its own, so that none this binary runs already
	// is reused; it is never started.
	opts.Supervisor = filepath.Join(t.TempDir(), "mcpx")
	c := startClient(t, stdioServer("misstarted"), opts)
	if st := c.Status(); st.State == upstream.StateConnected || !strings.Contains(st.Err, "upstream/supervisor/takeover") {
		t.Fatalf("state %s (%s), want a failed start naming the takeover package", st.State, st.Err)
	}
}
