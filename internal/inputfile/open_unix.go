//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// openNonblock opens path without blocking on a FIFO whose writer is
// missing (a regular file ignores O_NONBLOCK).
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
