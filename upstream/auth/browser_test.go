package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenBrowserHonoursBROWSER(t *testing.T) {
	out := filepath.Join(t.TempDir(), "opened")
	url := "http://127.0.0.1:1/authorize?a=1&state=x y;$(touch /tmp/mcpx-pwned)"
	// The first command does not exist: the next one in the list is used,
	// with the URL where %s stands, as one argument never run as shell.
	if err := OpenBrowser(url, "no-such-browser-mcpx:echo %s >"+out); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.TrimSpace(string(b)) == url {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser command wrote %q, want %q", b, url)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat("/tmp/mcpx-pwned"); err == nil {
		t.Fatal("the URL was run as shell")
	}
	if err := OpenBrowser(url, "no-such-browser-mcpx"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("with no usable command: %v", err)
	}
}
