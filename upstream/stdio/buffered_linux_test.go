//go:build linux

package stdio

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// buffered is how many bytes wait in the pipe f reads from. A read with
// a deadline cannot tell: Go's poller fails it before trying when the
// deadline has passed.
func buffered(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatal(ierr)
	}
	return n
}
