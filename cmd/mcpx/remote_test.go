package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestServerURL: list, call and servers given --server-url (or
// MCPX_SERVER_URL) ask a running `serve --http`, with its token, and
// start no server of their own.
func TestServerURL(t *testing.T) {
	const token = "remote-token-abcdef"
	pids := t.TempDir()
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx", "--pid-dir", pids)}})
	srv := startHTTP(t, cfg, []string{"MCPX_HTTP_TOKEN=" + token})
	waitPidFiles(t, pids, 1)

	run := func(env []string, args ...string) (string, string, error) {
		cmd := mcpxCommand(args...)
		cmd.Dir = t.TempDir() // no config file here: everything comes from the server
		cmd.Env = append(cmd.Env, env...)
		var stderr testenv.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return string(out), stderr.String(), err
	}
	withToken := []string{"MCPX_HTTP_TOKEN=" + token}

	out, errOut, err := run(withToken, "list", "tools", "--json", "--server-url", srv.url+"/mcp")
	if err != nil {
		t.Fatalf("list: %v\n%s", err, errOut)
	}
	var tools []map[string]any
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	found := false
	for _, tool := range tools {
		found = found || (tool["name"] == "fx_echo" && tool["server"] == "fx")
	}
	if !found {
		t.Errorf("list tools: no fx_echo from server fx in %s", out)
	}

	out, errOut, err = run(append(withToken, "MCPX_SERVER_URL="+srv.url), "call", "fx_echo", `{"message":"over http"}`)
	if err != nil || !strings.Contains(out, "over http") {
		t.Errorf("call: %v %q\n%s", err, out, errOut)
	}

	// Completion asks the running mcpx for names too.
	out, errOut, err = run(append(withToken, "MCPX_SERVER_URL="+srv.url), "__complete", "call", "fx_ec")
	if err != nil || !strings.HasPrefix(out, "fx_echo\t") {
		t.Errorf("completion from the running mcpx: %v %q\n%s", err, out, errOut)
	}

	out, errOut, err = run(withToken, "servers", "--json", "--server-url", srv.url)
	if err != nil || !strings.Contains(out, `"fx"`) || !strings.Contains(out, `"state": "ready"`) {
		t.Errorf("servers: %v %q\n%s", err, out, errOut)
	}

	// Without the token the server refuses, and the command says so.
	_, errOut, err = run(nil, "list", "tools", "--server-url", srv.url)
	if err == nil || !strings.Contains(errOut, "401") {
		t.Errorf("list without the token: %v\n%s", err, errOut)
	}
	if n := len(pidsAlive(t, pids)); n != 1 {
		t.Errorf("fixture instances: %d, want 1 (the commands must not start their own)", n)
	}
}

// TestServerURLFailedServer: list through a running serve --http exits 1
// when a server there failed, as a local list does, after printing what
// the others have; with --server naming a working one it exits 0.
func TestServerURLFailedServer(t *testing.T) {
	const token = "remote-token-abcdef"
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx":     fx("--name", "fx"),
		"broken": fx("--exit-at-start", "3"),
	}})
	srv := startHTTP(t, cfg, []string{"MCPX_HTTP_TOKEN=" + token})
	t.Setenv("MCPX_HTTP_TOKEN", token)
	dir := t.TempDir() // no config file here: everything comes from the server
	list := func(args ...string) (string, string, int) {
		cmd := mcpxCommand(append([]string{"list", "tools", "--server-url", srv.url}, args...)...)
		cmd.Dir = dir
		var stderr testenv.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), stderr.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), stderr.String(), 0
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		out, _, code := list()
		return code == 1 && strings.Contains(out, "fx_echo")
	}, "list through serve --http never exited 1 with fx's tools while broken failed")
	if out, errOut, code := list("--server", "fx"); code != 0 || !strings.Contains(out, "fx_echo") {
		t.Errorf("list --server fx: exit %d, want 0 with fx's tools\n%s\n%s", code, out, errOut)
	}
}
