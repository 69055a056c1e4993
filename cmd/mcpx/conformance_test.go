package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// resultStamp is the timestamp ending a result directory's name.
var resultStamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// runConformance runs the server scenarios a protocol revision requires
// against url and returns, per scenario, the error messages of its failed
// checks (none: it passed).
func runConformance(t *testing.T, url, revision string) map[string][]string {
	t.Helper()
	out := t.TempDir()
	cmd := testenv.Conformance(t, "server", "--url", url, "--requirements", revision, "-o", out)
	var stderr testenv.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	// The suite exits non-zero when any scenario fails; its results are
	// what is compared.
	_ = cmd.Run()
	dirs, _ := filepath.Glob(filepath.Join(out, "server-*", "checks.json"))
	if len(dirs) == 0 {
		t.Fatalf("the conformance suite wrote no results:\n%s", stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("conformance suite output against %s:\n%s", url, stderr.String())
		}
	})
	res := map[string][]string{}
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			Status, ErrorMessage string
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// server-<scenario>-<timestamp>
		name := filepath.Base(filepath.Dir(f))
		name = strings.TrimPrefix(resultStamp.ReplaceAllString(name, ""), "server-")
		fails := []string{}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				fails = append(fails, c.ErrorMessage)
			}
		}
		res[name] = fails
	}
	return res
}

// passesThrough fails the test for every scenario that passes in alone
// (the results against from) and fails, or did not run, in through (the
// results against via). It returns how many passed in alone.
func passesThrough(t *testing.T, alone, through map[string][]string, from, via string) (passed int) {
	t.Helper()
	for name, fails := range alone {
		if len(fails) > 0 {
			continue
		}
		passed++
		got, ran := through[name]
		switch {
		case !ran:
			t.Errorf("%s: not run against %s", name, via)
		case len(got) > 0:
			t.Errorf("%s: passes against %s, fails through %s: %q", name, from, via, got)
		}
	}
	return passed
}

// Reference peers of revision 2026-07-28, from the Go SDK (go.mod's tool
// directive).
const (
	goSDKServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"
	goSDKClient = "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"
)

// TestConformance runs the official MCP conformance suite's server
// scenarios of revision 2025-11-25 against the Go SDK's reference server
// alone (streamable HTTP), then against `mcpx serve --http` in front of
// it (stdio, prefix ""): every scenario the reference passes passes
// through mcpx, DNS-rebinding protection included.
func TestConformance(t *testing.T) {
	reference := testenv.GoTool(t, goSDKServer)

	port := freePort(t)
	// Stateful: the 2025-11-25 scenarios include sessions and the GET stream.
	ref := exec.Command(reference, "-http", fmt.Sprintf("127.0.0.1:%d", port), "-stateless=false")
	var refLog testenv.Buffer
	ref.Stderr = &refLog
	if err := ref.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Process.Kill(); ref.Wait() })
	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(refLog.String(), "listening") },
		"the reference server is not listening; its log:\n%s", &refLog)
	alone := runConformance(t, fmt.Sprintf("http://127.0.0.1:%d/mcp", port), "2025-11-25")

	cfg := writeConfig(t, map[string]any{
		"expose": "direct",
		"servers": map[string]any{
			"everything": map[string]any{"command": reference, "prefix": ""},
		},
	})
	srv := startHTTP(t, cfg, nil)
	through := runConformance(t, srv.url+"/mcp", "2025-11-25")

	passed := passesThrough(t, alone, through, "the reference server", "mcpx")
	if passed == 0 {
		t.Fatal("the reference server passed no scenario: the suite did not run")
	}
	if fails := through["dns-rebinding-protection"]; len(fails) > 0 {
		t.Errorf("dns-rebinding-protection through mcpx: %q", fails)
	}
	t.Logf("reference alone passed %d scenarios", passed)
}
