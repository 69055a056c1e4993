//go:build unix && !linux

package supervisor

import "syscall"

// On systems other than Linux there is no child subreaper nor /proc to
// walk: a descendant that leaves the process group (setsid) is not
// tracked. See the README.

func becomeSubreaper() error { return nil }

func descendants(int, int) []int { return nil }

func adopted(int, string, func(int) bool, int) []int { return nil }

func signalTree(func() []int, syscall.Signal) {}
