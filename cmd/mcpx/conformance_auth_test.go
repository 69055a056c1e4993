package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestConformanceClientAuthLegacyWire runs, through the conformance
// harness (testdata/conformanceclient: `mcpx auth login`, `mcpx list`,
// `mcpx call`, logging in again once when mcpx says to), the OAuth client
// scenarios whose checks need MCP requests after the login, at the
// 2025-11-25 wire (--spec-version 2025-11-25 --force), where the
// scenario's server takes initialize. At 2026-07-28 its server is
// modern-only, which mcpx's upstream client does not speak yet
// (knownClientFailures); the OAuth behaviour is the same in both eras.
func TestConformanceClientAuthLegacyWire(t *testing.T) {
	harness := testenv.GoTool(t, "github.com/mcpx/mcpx/testdata/conformanceclient")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	extra, _ := json.Marshal([]string{runMainEnv + "=1"})
	for _, tc := range []struct {
		scenario string
		// want are checks that must be there and succeed: the ones that
		// show the behaviour, besides no check failing.
		want []string
	}{
		// A 403 insufficient_scope on tools/call: the next login asks
		// for the challenged scope too.
		{"auth/scope-step-up", []string{"scope-step-up-initial", "scope-step-up-escalation"}},
		// The resource metadata names a new authorization server after
		// the first call: mcpx registers with it and never shows it the
		// old server's client.
		{"auth/authorization-server-migration", []string{"sep-2352-reregister-on-as-change", "sep-2352-no-reuse-on-as-change"}},
		// A server that keeps answering 403 gets one more login, not a
		// loop.
		{"auth/scope-retry-limit", nil},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			out := t.TempDir()
			cmd := testenv.Conformance(t, "client", "--command", harness, "--scenario", tc.scenario,
				"--spec-version", "2025-11-25", "--force", "-o", out)
			cmd.Env = append(os.Environ(), "MCPX_CONFORMANCE_MCPX="+exe, "MCPX_CONFORMANCE_ENV="+string(extra))
			var log testenv.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			_ = cmd.Run() // the checks are what is judged
			files, _ := filepath.Glob(filepath.Join(out, "auth", "*", "checks.json"))
			if len(files) != 1 {
				t.Fatalf("want one result, got %d:\n%s", len(files), log.String())
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var checks []struct{ ID, Status, Description string }
			if err := json.Unmarshal(b, &checks); err != nil {
				t.Fatal(err)
			}
			status := map[string]string{}
			for _, c := range checks {
				status[c.ID] = c.Status
				if c.Status == "FAILURE" {
					t.Errorf("%s: %s", c.ID, c.Description)
				}
			}
			for _, id := range tc.want {
				if status[id] != "SUCCESS" {
					t.Errorf("check %s: %q, want SUCCESS", id, status[id])
				}
			}
			if t.Failed() {
				t.Logf("conformance output:\n%s", log.String())
			}
		})
	}
}
