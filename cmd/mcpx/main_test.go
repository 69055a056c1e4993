package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// runMainEnv makes the test binary act as the mcpx command, so the
// end-to-end tests run the real program without a separate build.
const runMainEnv = "MCPX_TEST_RUN_MAIN"

// fixture is the path of the Go fixture server, built once by TestMain.
var fixture string

// browseEnv makes the test binary play the user's browser for
// `mcpx auth login`: $BROWSER runs it with the authorization URL, and it
// follows the URL (the test server approves at once) to mcpx's callback.
const browseEnv = "MCPX_TEST_BROWSE"

// copyRelayEnv makes the test binary a relay process that runs its
// arguments as a command and only copies bytes between its own stdio and
// the command's: the least a process between client and server can cost
// (BenchmarkCallConcurrent).
const copyRelayEnv = "MCPX_TEST_COPY_RELAY"

// testDir is TestMain's temporary directory.
var testDir string

func TestMain(m *testing.M) {
	if os.Getenv(browseEnv) == "1" && len(os.Args) > 1 {
		resp, err := http.Get(os.Args[len(os.Args)-1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "browse:", err)
			os.Exit(1)
		}
		resp.Body.Close()
		os.Exit(0)
	}
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(run(os.Args[1:], systemStreams()))
	}
	if os.Getenv(copyRelayEnv) == "1" {
		os.Exit(copyRelay(os.Args[1:]))
	}
	if os.Getenv(holdEnv) == "1" {
		os.Exit(holdRun(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "mcpx-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Remembered catalogs and configs the tests write stay in the test's
	// own directories; each serve child gets a cache of its own (see
	// mcpxCommand) unless a test shares one on purpose.
	testDir = dir
	if os.Getenv("GOCACHE") == "" {
		// The go commands the tests run (the fixture, the go-sdk
		// reference, the mcpx binary the memory tests measure) keep the
		// build cache they would use without the test's cache directory:
		// with an empty one each built everything again (76 s for mcpx).
		if d, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(d, "go-build"))
		}
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state")) // the audit trail
	// The tests share one state directory, where pins would be too: a
	// test's "fx" would be withheld in the next test that gives its "fx"
	// other tools. Pinning is tested where it is asked for (trust_test.go,
	// with a state directory of its own).
	os.Setenv("MCPX_TRUST", "off")
	fixture = filepath.Join(dir, "fixture")
	build := exec.Command("go", "build", "-o", fixture, "./testdata/fixture")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build fixture: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// copyRelay runs command and copies stdin to it and its stdout back.
func copyRelay(command []string) int {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "copy relay:", err)
		return 1
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		in.Close()
	}()
	_, _ = io.Copy(os.Stdout, out)
	_ = cmd.Wait()
	return 0
}
