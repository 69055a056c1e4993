package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// legacyPost sends one message of a legacy streamable HTTP session (sid
// "" for initialize) as auth, and returns the status, the session id the
// answer names and the answer's result (JSON or the event stream's last
// message).
func legacyPost(t *testing.T, url, sid, auth, body string) (int, string, json.RawMessage) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", auth)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			raw = d
		}
	}
	var msg struct{ Result json.RawMessage }
	_ = json.Unmarshal(raw, &msg)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg.Result
}

// TestKeysServeHTTP: mcpx keys makes named keys; serve --http lets each
// in as its principal, limited to its profile in both eras, names it in
// the audit trail, keeps one key off another's session, and refuses a
// key removed from the config at once, while the token still works.
func TestKeysServeHTTP(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, map[string]any{"expose": "direct",
		"servers":  map[string]any{"a": fx(), "b": fx()},
		"profiles": map[string]any{"onlya": map[string]any{"servers": []string{"a"}}},
	})
	alice, errOut, code := runCLI(t, "", "keys", "add", "alice", "--profile", "onlya", "--config", cfg)
	if code != 0 || !strings.HasPrefix(alice, "mcpx_") || !strings.Contains(errOut, "profile onlya") {
		t.Fatalf("keys add alice: %d %q %s", code, alice, errOut)
	}
	ci, _, code := runCLI(t, "", "keys", "add", "ci", "--config", cfg)
	if code != 0 {
		t.Fatalf("keys add ci: %d", code)
	}
	alice, ci = strings.TrimSpace(alice), strings.TrimSpace(ci)
	if _, errOut, code := runCLI(t, "", "keys", "add", "ci", "--config", cfg); code != 2 || !strings.Contains(errOut, "already exists") {
		t.Errorf("keys add ci again: %d %s", code, errOut)
	}
	out, _, _ := runCLI(t, "", "keys", "list", "--config", cfg)
	if !strings.Contains(out, "alice  profile onlya") || !strings.Contains(out, "ci     everything") || strings.Contains(out, "mcpx_") || strings.Contains(out, "sha256") {
		t.Errorf("keys list:\n%s", out)
	}
	file, _ := os.ReadFile(cfg)
	if strings.Contains(string(file), alice) || strings.Contains(string(file), ci) {
		t.Fatal("the config holds a key, not its hash")
	}

	const token = "the-shared-token-of-the-test"
	srv := startHTTP(t, cfg, []string{"XDG_STATE_HOME=" + state, "MCPX_HTTP_TOKEN=" + token})
	url := srv.url + "/mcp"
	meta := `{"_meta":` + modernMeta(`{}`) + `}`
	as := func(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

	// Modern: alice sees profile onlya at /mcp, ci everything.
	r := post(t, url, "tools/list", "", meta, as(alice))
	if names := toolNamesOf(t, []byte(`{"tools":`+string(r.Result["tools"])+`}`)); r.status != 200 || !allPrefixed(names, "a_") {
		t.Errorf("alice's tools/list: HTTP %d %q", r.status, names)
	}
	r = post(t, url, "tools/list", "", meta, as(ci))
	if names := toolNamesOf(t, []byte(`{"tools":`+string(r.Result["tools"])+`}`)); allPrefixed(names, "a_") {
		t.Errorf("ci's tools/list: %q, want b's tools too", names)
	}
	if r := post(t, srv.url+"/mcp/other", "tools/list", "", meta, as(alice)); r.status != 403 && r.status != 404 {
		t.Errorf("alice at another profile's path: HTTP %d", r.status)
	}
	call := `{"name":"a_echo","arguments":{"message":"hi"},"_meta":` + modernMeta(`{}`) + `}`
	if r := post(t, url, "tools/call", "a_echo", call, as(alice)); r.status != 200 || r.Error != nil {
		t.Errorf("alice's modern call: HTTP %d %+v", r.status, r.Error)
	}

	// The terminal API (mcpx list --server-url) shows alice her profile.
	out, errOut, code = runPinned(t, []string{"MCPX_HTTP_TOKEN=" + alice}, "list", "tools", "--server-url", srv.url, "--json")
	var listed []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != 0 || len(listed) == 0 {
		t.Fatalf("list --server-url as alice: %d %v\n%s%s", code, err, out, errOut)
	}
	for _, tool := range listed {
		if !strings.HasPrefix(tool.Name, "a_") {
			t.Errorf("list --server-url as alice shows %s", tool.Name)
		}
	}
	out, _, _ = runPinned(t, []string{"MCPX_HTTP_TOKEN=" + alice}, "servers", "--server-url", srv.url, "--json")
	if !strings.Contains(out, `"name": "a"`) || strings.Contains(out, `"name": "b"`) {
		t.Errorf("servers --server-url as alice:\n%s", out)
	}
	if _, errOut, code := runPinned(t, []string{"MCPX_HTTP_TOKEN=" + alice}, "call", "b_echo", `{"message":"x"}`, "--server-url", srv.url); code == 0 {
		t.Errorf("alice called b_echo through the terminal API: %s", errOut)
	}

	// Legacy: a session opened with alice's key is hers alone.
	status, sid, res := legacyPost(t, url, "", "Bearer "+alice,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"keytest","version":"1"}}}`)
	if status != 200 || sid == "" || len(res) == 0 {
		t.Fatalf("initialize as alice: HTTP %d, session %q", status, sid)
	}
	legacyPost(t, url, sid, "Bearer "+alice, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _, res = legacyPost(t, url, sid, "Bearer "+alice, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if names := toolNamesOf(t, res); !allPrefixed(names, "a_") || len(names) == 0 {
		t.Errorf("alice's session lists %q", names)
	}
	_, _, res = legacyPost(t, url, sid, "Bearer "+alice, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a_echo","arguments":{"message":"hi"}}}`)
	if !strings.Contains(string(res), "hi") {
		t.Errorf("alice's legacy call: %s", res)
	}
	if status, _, _ := legacyPost(t, url, sid, "Bearer "+ci, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); status != 404 {
		t.Errorf("ci on alice's session: HTTP %d, want 404", status)
	}
	if status, _, _ := legacyPost(t, url, sid, "Bearer "+token, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`); status != 404 {
		t.Errorf("the token on alice's session: HTTP %d, want 404", status)
	}

	// The trail names alice for both calls.
	var lines int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && lines < 2; time.Sleep(50 * time.Millisecond) {
		lines = 0
		for _, l := range auditLines(t, trailOf(state)) {
			if l.Principal == "alice" && l.Server == "a" && l.Tool == "echo" {
				lines++
			}
		}
	}
	if lines != 2 {
		t.Errorf("%d audit lines name alice, want 2 (modern and legacy): %+v", lines, auditLines(t, trailOf(state)))
	}

	// Revoked: removed from the config, refused from the next request
	// (the watch reloads it).
	if _, errOut, code := runCLI(t, "", "keys", "remove", "alice", "--config", cfg); code != 0 {
		t.Fatalf("keys remove alice: %d %s", code, errOut)
	}
	var last int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if last = post(t, url, "tools/list", "", meta, as(alice)).status; last == 401 {
			break
		}
	}
	if last != 401 {
		t.Errorf("alice's removed key: HTTP %d, want 401", last)
	}
	if r := post(t, url, "tools/list", "", meta, as(token)); r.status != 200 {
		t.Errorf("the token after the removal: HTTP %d", r.status)
	}
	if strings.Contains(srv.stderr.String(), alice) || strings.Contains(srv.stderr.String(), ci) {
		t.Error("serve's log shows a key")
	}
}

func allPrefixed(names []string, prefix string) bool {
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			return false
		}
	}
	return len(names) > 0
}
