package takeover

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFewImports keeps this package's imports to os and package
// supervisor: any other makes more of mcpx initialise before the
// supervisor takes over (see the package documentation).
func TestFewImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"os", "github.com/mcpx/mcpx/upstream/supervisor"}
	for _, imp := range strings.Fields(string(out)) {
		if !slices.Contains(allowed, imp) {
			t.Errorf("package takeover imports %s; see TestSupervisorTakesOverEarly in cmd/mcpx before allowing it", imp)
		}
	}
}
