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
//
// Package execpages is mcpx's own and imports only what this one may.
func TestFewImports(t *testing.T) {
	const execpages = "github.com/mcpx/mcpx/internal/execpages"
	allowed := []string{"bytes", "errors", "fmt", "io", "os", "os/signal", "strconv", "sync", "syscall", "time"}
	for _, pkg := range []string{".", execpages} {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			if !slices.Contains(allowed, imp) && !(pkg == "." && imp == execpages) {
				t.Errorf("package %s imports %s; measure the supervisor's RSS (BenchmarkIdleMemory in cmd/mcpx) before allowing it", pkg, imp)
			}
		}
	}
}
