package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/upstream/auth/authtest"
)

// TestDoctorProfile: doctor --profile checks only that profile's servers
// and says which profile; an unknown profile is a usage error naming the
// profiles there are.
func TestDoctorProfile(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"servers": map[string]any{
			"one": fx("--name", "one"),
			"two": map[string]any{"command": "mcpx-no-such-command", "timeout": "5s"},
		},
		"profiles": map[string]any{"good": map[string]any{"servers": []string{"one"}}},
	})
	out, errOut, code := runCLI(t, "", "doctor", "--config", cfg, "--profile", "good")
	if code != 0 || !strings.Contains(out, "profile good: 1 server(s)") || strings.Contains(out, "two") {
		t.Errorf("doctor --profile good: exit %d, want 0, the profile named and only its server:\n%s%s", code, out, errOut)
	}
	out, _, code = runCLI(t, "", "doctor", "--json", "--config", cfg, "--profile", "good")
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Profile != "good" ||
		len(rep.Servers) != 1 || rep.Servers[0].Name != "one" {
		t.Errorf("doctor --json --profile good: exit %d, %v: %+v", code, err, rep)
	}
	// The whole config still has the broken server.
	if _, _, code := runCLI(t, "", "doctor", "--config", cfg); code != 1 {
		t.Errorf("doctor without a profile: exit %d, want 1 for the missing command", code)
	}
	out, errOut, code = runCLI(t, "", "doctor", "--config", cfg, "--profile", "nope")
	if code != 2 || !strings.Contains(out+errOut, "good") {
		t.Errorf("doctor --profile nope: exit %d, want 2 naming the profile good:\n%s%s", code, out, errOut)
	}
}

// TestAuthProfile: auth status --profile lists only the profile's remote
// servers, and login and logout refuse a server the profile leaves out.
func TestAuthProfile(t *testing.T) {
	authSetup(t)
	srv := authtest.Start(t)
	cfg := writeConfig(t, map[string]any{
		"servers": map[string]any{
			"remote": map[string]any{"url": srv.URL},
			"other":  map[string]any{"url": srv.URL, "auth": false},
		},
		"profiles": map[string]any{"p": map[string]any{"servers": []string{"other"}}},
	})
	out, errs, code := runCLI(t, "", "auth", "status", "--json", "--config", cfg, "--profile", "p")
	var rows []authStatusJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 || len(rows) != 1 || rows[0].Name != "other" {
		t.Errorf("auth status --profile p: exit %d, %v, rows %+v, want only other\n%s", code, err, rows, errs)
	}
	for _, cmd := range []string{"login", "logout"} {
		out, errs, code := runCLI(t, "", "auth", cmd, "--config", cfg, "--profile", "p", "remote")
		if code != 2 || !strings.Contains(errs, "server remote is not in profile p (its servers: other)") {
			t.Errorf("auth %s --profile p remote: exit %d, want 2 saying remote is not in p\n%s%s", cmd, code, out, errs)
		}
	}
	if _, errs, code := runCLI(t, "", "auth", "status", "--config", cfg, "--profile", "nope"); code != 2 || !strings.Contains(errs, "p") {
		t.Errorf("auth status --profile nope: exit %d, want 2\n%s", code, errs)
	}
}
