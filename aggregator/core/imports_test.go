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

// TestNoTransportImport keeps the transports out of the core: answering
// a POST (headers, status codes, event streams) is package httpserve's,
// and how stdout is written without waiting (non-blocking pipes) the
// stdio transport's, which hands the core a TryWriter.
func TestNoTransportImport(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if imp == "net/http" || imp == "os" || imp == "github.com/mcpx/mcpx/nbpipe" {
			t.Errorf("package core imports %s", imp)
		}
	}
}
