package prefetch

import (
	"testing"
	"unsafe"
)

// A prefetch never faults, whatever the address, and leaves memory as it
// was.
func TestLineNeverFaultsAndChangesNothing(t *testing.T) {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	for _, p := range []unsafe.Pointer{
		unsafe.Pointer(&b[0]), unsafe.Pointer(&b[200]), unsafe.Pointer(&b[255]), nil,
	} {
		Line(p)
	}
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d is %d after prefetches, want %d", i, b[i], i)
		}
	}
}

// BenchmarkLine is the cost of one call: what the hot path pays per
// packet it prefetches.
func BenchmarkLine(b *testing.B) {
	buf := make([]byte, 1<<20)
	for i := 0; b.Loop(); i++ {
		Line(unsafe.Pointer(&buf[(i*64)&(len(buf)-1)]))
	}
}
