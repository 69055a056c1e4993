package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream/auth/authtest"
)

// TestServeLoginThroughURLElicitation: the official TypeScript SDK client
// declares URL-mode elicitation; mcpx asks it to open the authorization
// URL, finishes the login itself, and the server's tools appear with
// tools/list_changed.
func TestServeLoginThroughURLElicitation(t *testing.T) {
	tokensDir := authSetup(t)
	srv := authtest.Start(t)
	cfg := writeConfig(t, map[string]any{
		"expose":  "direct",
		"servers": map[string]any{"remote": map[string]any{"url": srv.URL}},
	})
	exe, _ := os.Executable()
	cmd := exec.Command("node", "../../testdata/node/e2e-oauth-client.mjs", exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "E2E_TOOL=remote_whoami", "E2E_STEPUP=remote_admin",
		"E2E_EXPIRE="+srv.Base+"/test/expire")
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var got struct {
		Elicitations []struct {
			Mode, ElicitationID, URL, Message string
		}
		Completions           []struct{ ElicitationID string }
		ListChanged           int
		BrowserStatus         int
		ToolsBefore           []string
		ToolsAfter            []string
		Call, CallAfterExpiry struct {
			IsError bool
			Content []struct{ Text string }
		}
		StepUpFirst, StepUpAgain struct {
			IsError bool
			Content []struct{ Text string }
		}
		Error string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ts client output %q: %v", out, err)
	}
	if got.Error != "" {
		t.Fatalf("ts client: %s\nmcpx stderr:\n%s", got.Error, stderr.String())
	}
	if len(got.Elicitations) != 2 {
		t.Fatalf("elicitations = %+v, want two (login, then step-up)", got.Elicitations)
	}
	e := got.Elicitations[0]
	if e.Mode != "url" || e.ElicitationID == "" || !strings.HasPrefix(e.URL, srv.Base+"/authorize?") || !strings.Contains(e.Message, `"remote"`) {
		t.Errorf("elicitation = %+v", e)
	}
	if got.BrowserStatus != 200 {
		t.Errorf("the callback page answered %d", got.BrowserStatus)
	}
	if len(got.Completions) != 2 || got.Completions[0].ElicitationID != e.ElicitationID ||
		got.Completions[1].ElicitationID != got.Elicitations[1].ElicitationID {
		t.Errorf("completions = %+v, want one per elicitation", got.Completions)
	}
	for _, n := range got.ToolsBefore {
		if strings.HasPrefix(n, "remote_") {
			t.Errorf("tool %s listed before the login", n)
		}
	}
	if got.ListChanged == 0 || !strings.Contains(strings.Join(got.ToolsAfter, ","), "remote_whoami") {
		t.Errorf("after login: list_changed %d, tools %v", got.ListChanged, got.ToolsAfter)
	}
	if got.Call.IsError || len(got.Call.Content) != 1 || !strings.Contains(got.Call.Content[0].Text, `"scopes":["mcp:read"]`) {
		t.Errorf("remote_whoami = %+v", got.Call)
	}
	// The server stopped honouring the access token mid-session: mcpx
	// refreshed it and the client noticed nothing.
	if got.CallAfterExpiry.IsError || len(got.CallAfterExpiry.Content) != 1 || !strings.Contains(got.CallAfterExpiry.Content[0].Text, `"scopes":["mcp:read"]`) {
		t.Errorf("remote_whoami after the token expired = %+v", got.CallAfterExpiry)
	}
	if n := srv.Log(t).Refreshes; n != 1 {
		t.Errorf("refreshes = %d, want 1", n)
	}
	// Step-up: the admin tool needs mcp:admin; the call fails saying so,
	// mcpx asks the client to log in again with both scopes, and the
	// second call works.
	if !got.StepUpFirst.IsError || len(got.StepUpFirst.Content) == 0 || !strings.Contains(got.StepUpFirst.Content[0].Text, "mcp:admin") {
		t.Errorf("first admin call = %+v, want an error naming mcp:admin", got.StepUpFirst)
	}
	if got.StepUpAgain.IsError || len(got.StepUpAgain.Content) == 0 || got.StepUpAgain.Content[0].Text != "admin ok" {
		t.Errorf("admin call after step-up = %+v", got.StepUpAgain)
	}
	if l := srv.Log(t); len(l.Authorize) != 2 || l.Authorize[1]["scope"] != "mcp:read mcp:admin" {
		t.Errorf("step-up authorization asked for %q, want mcp:read mcp:admin", l.Authorize[len(l.Authorize)-1]["scope"])
	}
	if entries, err := os.ReadDir(tokensDir); err != nil || len(entries) != 1 {
		t.Errorf("the login was not stored: %v, %v", entries, err)
	}
	if l := srv.Log(t); len(l.Registrations) != 1 || len(l.Token) != 3 {
		t.Errorf("server saw %d registrations and %d token requests, want 1 and 3 (login, refresh, step-up)", len(l.Registrations), len(l.Token))
	}
}

// TestServeNeedsLoginWithoutURLElicitation: a client that cannot open
// URLs is not asked; the server's tools are absent and a call to one says
// how to log in.
func TestServeNeedsLoginWithoutURLElicitation(t *testing.T) {
	authSetup(t)
	srv := authtest.Start(t)
	cfg := writeConfig(t, map[string]any{
		"expose":  "both",
		"servers": map[string]any{"remote": map[string]any{"url": srv.URL}, "local": fx()},
	})
	c := startServe(t, cfg)
	c.initialize()
	res, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatal(e.Message)
	}
	if strings.Contains(string(res), "remote_") {
		t.Errorf("tools of the server that needs a login are listed: %s", res)
	}
	res, e = c.request("tools/call", map[string]any{"name": "remote_echo", "arguments": map[string]any{"message": "x"}})
	if e != nil || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "mcpx auth login remote") {
		t.Errorf("call to remote_echo: %s %+v, want an isError result naming `mcpx auth login remote`", res, e)
	}
	// Through the proxy tool (the default way), the same.
	res, e = c.request("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{
		"action": "call", "type": "tool", "path": "remote_echo", "args": map[string]any{"message": "x"}}})
	var r struct {
		IsError bool
		Content []struct{ Text string }
	}
	if e != nil || json.Unmarshal(res, &r) != nil || !r.IsError || len(r.Content) == 0 ||
		!strings.Contains(r.Content[0].Text, "Unknown tool: 'remote_echo' (server remote needs a login") ||
		!strings.Contains(r.Content[0].Text, "mcpx auth login remote") {
		t.Errorf("proxy call to remote_echo: %s %+v", res, e)
	}
	for _, l := range c.stdoutLines() {
		if strings.Contains(string(l), "elicitation/create") {
			t.Errorf("mcpx asked a client without URL elicitation to open a URL: %s", l)
		}
	}
}
