package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingSkipsOrFails(t *testing.T) {
	for _, require := range []bool{false, true} {
		r := &recorder{TB: t}
		r.run(func() { missing(r, require, "Chromium", installChromium) })
		got, other := r.skipped, r.failed
		if require {
			got, other = r.failed, r.skipped
		}
		if other != "" || !strings.Contains(got, "needs Chromium: apt-get install -y chromium") {
			t.Errorf("require=%v: skipped %q, failed %q; want one message naming the peer and its install command",
				require, r.skipped, r.failed)
		}
	}
}

func TestMissingPackage(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if pkg, err := missingPackage(dir); pkg != "package.json" || err == nil {
		t.Errorf("no package.json: got %q, %v", pkg, err)
	}
	write("package.json", `{"dependencies": {"zod": "4", "@scope/a": "1"}}`)
	if pkg, err := missingPackage(dir); pkg != "@scope/a" || err == nil {
		t.Errorf("nothing installed: got %q, %v; want @scope/a first", pkg, err)
	}
	write("node_modules/@scope/a/package.json", `{}`)
	if pkg, err := missingPackage(dir); pkg != "zod" || err == nil {
		t.Errorf("zod missing: got %q, %v", pkg, err)
	}
	write("node_modules/zod/package.json", `{}`)
	if pkg, err := missingPackage(dir); err != nil {
		t.Errorf("all installed: got %q, %v", pkg, err)
	}
}

func TestFindProgram(t *testing.T) {
	fixed := filepath.Join(t.TempDir(), "chromium")
	inPath := func(name string) (string, error) { return "/opt/bin/" + name, nil }
	notInPath := func(string) (string, error) { return "", errors.New("not found") }
	if got := findProgram(fixed, "chromium", notInPath); got != "" {
		t.Errorf("nowhere: got %q", got)
	}
	if got := findProgram(fixed, "chromium", inPath); got != "/opt/bin/chromium" {
		t.Errorf("in PATH only: got %q", got)
	}
	if err := os.WriteFile(fixed, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := findProgram(fixed, "chromium", inPath); got != fixed {
		t.Errorf("at the fixed path: got %q, want %q", got, fixed)
	}
}

func TestModuleRoot(t *testing.T) {
	if _, err := os.Stat(filepath.Join(ModuleRoot(), "go.mod")); err != nil {
		t.Fatalf("ModuleRoot %s: %v", ModuleRoot(), err)
	}
}
