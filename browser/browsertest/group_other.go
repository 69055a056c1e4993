//go:build !unix

package browsertest

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no Unix process groups.
func ownGroup(*exec.Cmd) {}

// stopGroup kills p: without process groups there is no asking first.
func stopGroup(p *os.Process, _ bool) { _ = p.Kill() }
