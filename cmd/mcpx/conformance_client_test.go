package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/internal/testenv"
)

// knownClientFailures are the client scenarios of revision 2026-07-28
// that the Go SDK's reference client passes and mcpx, driven through its
// own commands, does not yet. The list may only shrink:
// TestConformanceClient fails when a scenario named here passes, so that
// its line is deleted with the change that fixed it.
var knownClientFailures = map[string]string{}

// runClientConformance runs the client scenarios revision 2026-07-28
// requires with command as the client, env added to the suite's, and
// returns, per scenario ("auth/..." for the OAuth ones), the error
// messages of its failed checks (none: it passed).
func runClientConformance(t *testing.T, command string, env []string) map[string][]string {
	t.Helper()
	out := t.TempDir()
	cmd := testenv.Conformance(t, "client", "--command", command, "--requirements", "2026-07-28", "-o", out)
	cmd.Env = append(os.Environ(), env...)
	var log testenv.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	// The suite exits non-zero when any scenario fails; its results are
	// what is compared.
	_ = cmd.Run()
	files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	auth, _ := filepath.Glob(filepath.Join(out, "auth", "*", "checks.json"))
	files = append(files, auth...)
	if len(files) == 0 {
		t.Fatalf("the conformance suite wrote no results:\n%s", log.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("conformance suite output with %s:\n%s", filepath.Base(command), log.String())
		}
	})
	res := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			Status, ErrorMessage, Description string
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel(out, filepath.Dir(f))
		name := resultStamp.ReplaceAllString(filepath.ToSlash(rel), "")
		fails := []string{}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				msg := c.ErrorMessage
				if msg == "" {
					msg = c.Description
				}
				fails = append(fails, msg)
			}
		}
		res[name] = fails
	}
	return res
}

// TestConformanceClient runs the conformance suite's client scenarios of
// revision 2026-07-28 with the Go SDK's reference client, then with mcpx
// driven through its own commands by testdata/conformanceclient (a
// config naming the scenario's server, `mcpx list`, `mcpx call`, ...):
// every scenario the reference passes passes with mcpx, but for
// knownClientFailures.
func TestConformanceClient(t *testing.T) {
	reference := testenv.GoTool(t, goSDKClient)
	alone := runClientConformance(t, reference, nil)

	harness := testenv.GoTool(t, "github.com/mcpx/mcpx/testdata/conformanceclient")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	extra, _ := json.Marshal([]string{runMainEnv + "=1"})
	withMcpx := runClientConformance(t, harness, []string{
		"MCPX_CONFORMANCE_MCPX=" + exe,
		"MCPX_CONFORMANCE_ENV=" + string(extra),
	})

	var passed, mcpxPassed []string
	for name, fails := range alone {
		if len(fails) > 0 {
			continue
		}
		passed = append(passed, name)
		got, ran := withMcpx[name]
		reason, known := knownClientFailures[name]
		switch {
		case !ran:
			t.Errorf("%s: not run with mcpx", name)
		case len(got) == 0 && known:
			mcpxPassed = append(mcpxPassed, name)
			t.Errorf("%s: passes with mcpx now: delete its line from knownClientFailures (%s)", name, reason)
		case len(got) == 0:
			mcpxPassed = append(mcpxPassed, name)
		case !known:
			t.Errorf("%s: passes with the reference client, fails with mcpx: %q", name, got)
		}
	}
	if len(passed) == 0 {
		t.Fatal("the reference client passed no scenario: the suite did not run")
	}
	for name := range knownClientFailures {
		if _, ok := alone[name]; !ok {
			t.Errorf("knownClientFailures names %s, which the suite did not run", name)
		}
	}
	sort.Strings(mcpxPassed)
	t.Logf("client scenarios of 2026-07-28: the reference passes %d, mcpx %d (%s); %d known failures",
		len(passed), len(mcpxPassed), strings.Join(mcpxPassed, ", "), len(knownClientFailures))
}
