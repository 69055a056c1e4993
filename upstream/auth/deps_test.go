package auth

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksNoMCPGoServer: upstream/auth links neither mcp-go's
// client/transport nor, through it, mcp-go's server package and the
// JSON-schema library it compiles meta-schemas with at every start
// (issue 13).
func TestLinksNoMCPGoServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, p := range []string{
		"github.com/mark3labs/mcp-go/client/transport",
		"github.com/mark3labs/mcp-go/server",
		"github.com/santhosh-tekuri/jsonschema/v6",
	} {
		if slices.Contains(deps, p) {
			t.Errorf("upstream/auth links %s", p)
		}
	}
}
