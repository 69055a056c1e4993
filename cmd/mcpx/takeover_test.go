//go:build unix

package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestSupervisorTakesOverEarly: mcpx run as its own supervisor becomes the
// supervisor before the rest of the binary initialises (the blank import
// of package takeover in main.go). It answers as the supervisor does
// (here: no socket to mcpx on fd 3, exit 2), and GODEBUG=inittrace=1 shows
// that few packages initialised before it, none of mcpx's others and none
// of the heavy libraries.
func TestSupervisorTakesOverEarly(t *testing.T) {
	cmd := mcpxCommand()
	cmd.Env = append(cmd.Env, "MCPX_SUPERVISOR=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "mcpx supervisor: no socket to mcpx on fd 3") {
		t.Fatalf("mcpx with MCPX_SUPERVISOR=1 and no socket: %v, want exit 2 from the supervisor\n%s", err, out)
	}
	early := initialised(out)

	cmd = mcpxCommand("--version")
	cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpx --version: %v\n%s", err, out)
	}
	all := initialised(out)

	heavy := []string{"encoding/json", "net/http", "github.com/charmbracelet/log", "github.com/spf13/cobra", "github.com/mark3labs/mcp-go/mcp"}
	for _, p := range early {
		if slices.Contains(heavy, p) || strings.HasPrefix(p, "github.com/mcpx/mcpx/") && !strings.HasPrefix(p, "github.com/mcpx/mcpx/upstream/supervisor") {
			t.Errorf("%s initialised before the supervisor took over", p)
		}
	}
	t.Logf("%d of %d packages initialised before the takeover: %s", len(early), len(all), strings.Join(early, " "))
	if len(early)*2 > len(all) {
		t.Errorf("%d of the %d packages that initialise in mcpx did before the supervisor took over, want under half:\n%s",
			len(early), len(all), strings.Join(early, "\n"))
	}
}

// initialised lists the packages a GODEBUG=inittrace=1 run initialised,
// in order, from its lines "init <package> @<start> ms, ...".
func initialised(trace []byte) []string {
	var pkgs []string
	for _, line := range strings.Split(string(trace), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" && strings.HasPrefix(f[2], "@") {
			pkgs = append(pkgs, f[1])
		}
	}
	return pkgs
}
