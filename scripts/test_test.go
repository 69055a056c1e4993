// Package scripts_test checks the repository's scripts with stand-ins for
// the tools they run.
package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stubGo stands in for go (and, as scripts/release, for the release
// check). It notes the step it runs as and, for each step it should
// overlap with, waits a while for that one to be running and notes it;
// it then waits for those steps to have noted it in turn, so that none
// ends before its partners looked. It fails when STUB_FAIL names its step.
const stubGo = `#!/usr/bin/env bash
case "$*" in
"test -race -list . ./cmd/mcpx/") printf '%s\n' TestA ExampleB BenchmarkX TestC "ok  	github.com/mcpx/mcpx/cmd/mcpx	0.1s"; exit 0 ;;
"list ./...") printf '%s\n' github.com/mcpx/mcpx/audit github.com/mcpx/mcpx/cmd/mcpx github.com/mcpx/mcpx/jsonrpc; exit 0 ;;
vet*) step=vet partners=test ;;
*" -run ^("*")$ ./cmd/mcpx/") # one shard of cmd/mcpx: its only test names the step
	args="$*" && step=${args##*-run ^(} && step=mcpx-${step%%)\$*} partners=test ;;
*"cmd/mcpx"*) echo "stub: cmd/mcpx in a run of the other packages: $*" >&2; exit 2 ;;
"test -race -count=1 -timeout 30m github.com/mcpx/mcpx/audit github.com/mcpx/mcpx/jsonrpc ./testdata/fixture/")
	step=test partners="vet release mcpx-TestA mcpx-ExampleB mcpx-TestC" ;;
*FuzzDecodeArgs*) step=fuzz-args partners=fuzz-valid ;;
*FuzzValid*) step=fuzz-valid partners=fuzz-args ;;
--check) step=release partners=test ;;
*) echo "stub: unexpected arguments: $*" >&2; exit 2 ;;
esac
touch "$STUB_DIR/$step.running"
trap 'rm -f "$STUB_DIR/$step.running"' EXIT
# await FILE waits up to 20s for FILE to exist.
await() {
	for _ in $(seq 200); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
for p in $partners; do
	if await "$STUB_DIR/$p.running"; then
		echo "$step beside $p" >>"$STUB_DIR/calls"
		touch "$STUB_DIR/$step.saw-$p"
	fi
done
for p in $partners; do
	await "$STUB_DIR/$p.saw-$step" || true
done
echo "$step ran" >>"$STUB_DIR/calls"
if [ "${STUB_FAIL:-}" = "$step" ]; then
	echo "output of the failing $step"
	exit 3
fi
`

// runTestScript runs a copy of scripts/test with go, npm, node and
// scripts/release replaced by stubs, and returns its output, its exit
// code and the steps the stubs saw.
func runTestScript(t *testing.T, fail string) (string, int, []string) {
	t.Helper()
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil {
		t.Skip("scripts/test would install Chromium: run this where it is installed")
	}
	root, bin, stub := t.TempDir(), t.TempDir(), t.TempDir()
	script, err := os.ReadFile("test")
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "scripts", "test"), string(script))
	write(filepath.Join(root, "scripts", "release"), stubGo)
	write(filepath.Join(bin, "go"), stubGo)
	for _, name := range []string{"npm", "node"} {
		write(filepath.Join(bin, name), "#!/bin/sh\n")
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "test"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "STUB_DIR="+stub, "STUB_FAIL="+fail)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("scripts/test: %v", err)
		}
		code = exit.ExitCode()
	}
	calls, _ := os.ReadFile(filepath.Join(stub, "calls"))
	return string(out), code, strings.Split(strings.TrimSpace(string(calls)), "\n")
}

// TestTestScriptOverlapsSteps: scripts/test runs every step, go vet and
// the release check beside the tests, each of cmd/mcpx's tests in one of
// three shards beside the other packages (which leave cmd/mcpx out), and
// the two fuzz steps beside each other.
func TestTestScriptOverlapsSteps(t *testing.T) {
	out, code, calls := runTestScript(t, "")
	if code != 0 {
		t.Fatalf("exit %d with every step passing:\n%s", code, out)
	}
	for _, want := range []string{
		"vet ran", "test ran", "fuzz-args ran", "fuzz-valid ran", "release ran",
		"vet beside test", "test beside vet", "release beside test", "test beside release",
		"mcpx-TestA ran", "mcpx-ExampleB ran", "mcpx-TestC ran", "test beside mcpx-TestC", "mcpx-TestA beside test",
		"fuzz-args beside fuzz-valid", "fuzz-valid beside fuzz-args",
	} {
		if !slices.Contains(calls, want) {
			t.Errorf("no %q in the steps seen: %q", want, calls)
		}
	}
}

// TestTestScriptFailures: whichever step fails, scripts/test still runs
// the others, shows the failing step's output, names it, and fails.
func TestTestScriptFailures(t *testing.T) {
	for _, step := range []struct{ stub, name string }{
		{"vet", "go vet"},
		{"test", "go test (all but cmd/mcpx)"},
		{"mcpx-ExampleB", "go test ./cmd/mcpx (2 of 3)"},
		{"fuzz-args", "fuzz proxytool"},
		{"fuzz-valid", "fuzz rawjson"},
		{"release", "scripts/release --check"},
	} {
		t.Run(step.stub, func(t *testing.T) {
			t.Parallel()
			out, code, calls := runTestScript(t, step.stub)
			if code == 0 {
				t.Errorf("exit 0 when %s failed:\n%s", step.name, out)
			}
			if !strings.Contains(out, "output of the failing "+step.stub) || !strings.Contains(out, "failed: "+step.name) {
				t.Errorf("the output does not show and name the failing %s:\n%s", step.name, out)
			}
			for _, other := range []string{"vet", "test", "mcpx-TestA", "mcpx-ExampleB", "mcpx-TestC", "fuzz-args", "fuzz-valid", "release"} {
				if !slices.Contains(calls, other+" ran") {
					t.Errorf("%s did not run after %s failed: %q", other, step.stub, calls)
				}
			}
		})
	}
}
