package aggregator

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoHTTPServing keeps the transports out of the catalog and router:
// what answers HTTP requests (the MCP endpoints, the terminal API, the
// dashboard) lives in packages beside it (httpserve, termapi, dashboard),
// which read the catalog through interfaces they declare.
func TestNoHTTPServing(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if imp == "net/http" {
			t.Errorf("package aggregator imports %s", imp)
		}
	}
}
