//go:build !unix

package upstream

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("the pipe is full")

// tryWrite never writes here: every write goes through the blocking path
// on a goroutine of its own.
func tryWrite(*os.File, []byte) (int, error) { return 0, errWouldBlock }
