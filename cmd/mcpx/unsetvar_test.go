package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// unsetVar is a variable no test environment sets.
const unsetVar = "MCPX_TEST_NEVER_SET_31"

// A ${VAR} that is not set stops only the server that uses it: every
// command runs, the server is failed with the variable named, and every
// other server works (issue 31, item 2).
func TestUnsetVariableFailsOneServer(t *testing.T) {
	if _, ok := os.LookupEnv(unsetVar); ok {
		t.Skipf("%s is set", unsetVar)
	}
	gh := fx("--name", "github")
	gh["env"] = map[string]any{"GITHUB_TOKEN": "${" + unsetVar + "}"}
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx"), "github": gh}})
	problem := unsetVar + " is not set (env GITHUB_TOKEN)"

	out, errOut, code := runCLI(t, "", "servers", "--json", "--config", cfg)
	if code != 1 {
		t.Fatalf("servers: exit %d, want 1 (a server failed)\n%s", code, errOut)
	}
	var rows []serverJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("servers --json: %v\n%s", err, out)
	}
	states := map[string]serverJSON{}
	for _, r := range rows {
		states[r.Name] = r
	}
	if r := states["github"]; r.State != "failed" || r.Error != problem {
		t.Errorf("github: state %q, error %q; want failed, %q", r.State, r.Error, problem)
	}
	if r := states["fx"]; r.State != "ready" || r.Tools == 0 {
		t.Errorf("fx: state %q with %d tools; want ready with its tools", r.State, r.Tools)
	}

	out, errOut, code = runCLI(t, "", "list", "tools", "--config", cfg)
	if code != 1 || !strings.Contains(out, "fx_echo\t") || !strings.Contains(errOut, "server github failed: "+problem) {
		t.Errorf("list tools: exit %d; want 1, fx's tools and github's problem\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, _, code = runCLI(t, "", "doctor", "--json", "--config", cfg)
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("doctor --json: exit %d, %v; want 1 and a report\n%s", code, err, out)
	}
	reported := false
	for _, s := range rep.Servers {
		for _, f := range s.Findings {
			reported = reported || s.Name == "github" && f.Level == "error" && strings.Contains(f.Message, problem)
		}
	}
	if !reported || rep.Errors != 1 {
		t.Errorf("doctor: %d error(s); want one, for github, naming %q\n%s", rep.Errors, problem, out)
	}

	// serve: fx's tools are served, and the log says why github is not,
	// once.
	c := startServe(t, cfg, "--expose", "direct")
	c.initialize()
	if names := c.listToolNames(); !slices.Contains(names, "fx_echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "github_") }) {
		t.Errorf("tools/list = %q; want fx's tools and none of github's", names)
	}
	c.stop()
	if n := strings.Count(c.stderr.String(), problem); n != 1 {
		t.Errorf("serve logged the problem %d times, want once:\n%s", n, c.stderr.String())
	}
}

// serve --http refuses an http section whose ${VAR} is not set (it guards
// the listener); serve --stdio and the other commands run.
func TestUnsetVariableInHTTPSection(t *testing.T) {
	if _, ok := os.LookupEnv(unsetVar); ok {
		t.Skipf("%s is set", unsetVar)
	}
	cfg := writeConfig(t, map[string]any{"http": map[string]any{"token": "${" + unsetVar + "}"},
		"servers": map[string]any{"fx": fx("--name", "fx")}})
	_, errOut, code := runCLI(t, "", "serve", "--http", "127.0.0.1:0", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "http: "+unsetVar+" is not set (http.token)") {
		t.Errorf("serve --http: exit %d; want 2 naming the variable\n%s", code, errOut)
	}
	if _, errOut, code = runCLI(t, "", "servers", "--config", cfg); code != 0 {
		t.Errorf("servers: exit %d, want 0\n%s", code, errOut)
	}
}
