//go:build !unix

package main

import (
	"os"
	"os/exec"
)

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func ownGroup(*exec.Cmd) {}

func killGroup(p *os.Process) { _ = p.Kill() }
