package core

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoUpstreamImport keeps the layers one way: the server core serves
// clients and must not depend on the client side (package upstream and
// those under it), with which it shares only the leaves (callopt,
// jsonrpc, frame).
func TestNoUpstreamImport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/mcpx/mcpx/upstream" || strings.HasPrefix(dep, "github.com/mcpx/mcpx/upstream/") {
			t.Errorf("package core depends on %s", dep)
		}
	}
}
