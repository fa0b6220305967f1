//go:build amd64 || arm64

package prefetch

import "unsafe"

// line is PREFETCHT0 (amd64) or PRFM PLDL1KEEP (arm64): into every cache
// level, to be kept.
//
//go:noescape
func line(p unsafe.Pointer)
