//go:build !unix

package nbpipe

import (
	"errors"
	"os"
)

// Reader is not available here: read the file itself.
type Reader struct{ *os.File }

// NewReader reports that there is no choice of waits to make here.
func NewReader(f *os.File) (*Reader, error) {
	return nil, errors.New("nbpipe: no non-blocking reads on this system")
}
