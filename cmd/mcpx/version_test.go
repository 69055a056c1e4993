package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionAndFlagPrintTheSameLine(t *testing.T) {
	out, _, code := runCLI(t, "", "version")
	flag, _, code2 := runCLI(t, "", "--version")
	if code != 0 || code2 != 0 {
		t.Fatalf("exit %d and %d", code, code2)
	}
	if out != flag || out != "mcpx "+versionString()+"\n" {
		t.Errorf("mcpx version = %q, mcpx --version = %q: want the same line", out, flag)
	}
}

func TestFormatVersion(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123224436-ec23b7c27727"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "ec23b7c277277d922bcda2893cad4957d20f16d6"},
		{Key: "vcs.time", Value: "2026-11-23T22:44:36Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"release stamp wins over build info", "v1.2.3", "abc1234", "2026-01-02T03:04:05Z", vcs, "v1.2.3 (abc1234, 2026-01-02T03:04:05Z)"},
		{"go build in a checkout", "dev", "", "", vcs, "v0.0.0-20261123224436-ec23b7c27727 (ec23b7c27727, 2026-11-23T22:44:36Z, modified)"},
		{"go install module@version", "dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"go build without VCS", "dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build info", "dev", "", "", nil, "dev"},
	} {
		if got := formatVersion(tc.version, tc.commit, tc.date, tc.info); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
