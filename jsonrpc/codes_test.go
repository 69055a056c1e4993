package jsonrpc

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneVocabulary keeps mcpx's error codes in this package: code that
// answers with mcp-go's constants (mcp.INVALID_PARAMS, ...) would have two
// names for one code, and the next one added in one place only.
func TestOneVocabulary(t *testing.T) {
	mcpGoCode := regexp.MustCompile(`\bmcp\.(PARSE_ERROR|INVALID_REQUEST|METHOD_NOT_FOUND|INVALID_PARAMS|INTERNAL_ERROR|RESOURCE_NOT_FOUND|REQUEST_INTERRUPTED)\b`)
	root := ".."
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root is not the parent of package jsonrpc: %v", err)
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range mcpGoCode.FindAll(src, -1) {
			t.Errorf("%s uses %s: use this package's Code constant", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
