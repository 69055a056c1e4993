//go:build !unix

package upstream

// MaybeSupervise reports ok == false: only Unix upstreams run under a
// supervisor.
func MaybeSupervise() (code int, ok bool) { return 0, false }
