package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

func TestOpenBrowserHonoursBROWSER(t *testing.T) {
	out := filepath.Join(t.TempDir(), "opened")
	url := "http://127.0.0.1:1/authorize?a=1&state=x y;$(touch /tmp/mcpx-pwned)"
	// The first command does not exist: the next one in the list is used,
	// with the URL where %s stands, as one argument never run as shell.
	if err := OpenBrowser(url, "no-such-browser-mcpx:echo %s >"+out); err != nil {
		t.Fatal(err)
	}
	var b []byte
	testenv.Eventually(t, 10*time.Second, func() bool {
		b, _ = os.ReadFile(out)
		return strings.TrimSpace(string(b)) == url
	}, "the browser command wrote %q, want %q", &b, url)
	if _, err := os.Stat("/tmp/mcpx-pwned"); err == nil {
		t.Fatal("the URL was run as shell")
	}
	if err := OpenBrowser(url, "no-such-browser-mcpx"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("with no usable command: %v", err)
	}
}
