//go:build !unix

package inputfile

import "os"

// openNonblock opens path; systems without FIFOs in the file system have
// nothing to block on.
func openNonblock(path string) (*os.File, error) { return os.Open(path) }
