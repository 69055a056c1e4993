package supervisor

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFewImports keeps this package's imports to the few that initialise
// early (see the package documentation): one more that sorts late, such
// as strings, net or encoding/json, makes dozens of packages of mcpx
// initialise before the supervisor takes over, and doubles its memory.
func TestFewImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"bytes", "errors", "fmt", "io", "os", "os/signal", "strconv", "sync", "syscall", "time"}
	for _, imp := range strings.Fields(string(out)) {
		if !slices.Contains(allowed, imp) {
			t.Errorf("package supervisor imports %s; measure the supervisor's RSS (BenchmarkIdleMemory in cmd/mcpx) before allowing it", imp)
		}
	}
}
