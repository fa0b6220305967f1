// Package prefetch asks the CPU to start loading a cache line that the
// caller will read soon, without waiting for it. The simulator uses it
// where it knows which packet an event a few hundred nanoseconds of real
// time later will read (the next packet on a wire, the next in a queue):
// those packets were last touched when they were sent or queued, often
// tens of thousands of events earlier, and have usually left the caches.
package prefetch

import "unsafe"

// Line hints that the cache line at p will be read soon. It never faults
// (p may be nil or anything) and changes nothing a program computes: on
// architectures without the assembly it does nothing.
func Line(p unsafe.Pointer) { line(p) }
