// Package hugepages asks the kernel to back a large Go heap with
// transparent huge pages.
//
// A simulation of a large fabric reads its packets, ports and route tables
// at random across tens of megabytes: with 4 KiB pages nearly every such
// read also misses the TLB, and the page walk misses the caches too. Linux
// distributions commonly ship transparent huge pages in "madvise" mode, in
// which only memory a process marks gets them, and the Go runtime marks
// none of its heap. Maintain marks it (MADV_HUGEPAGE) and folds what is
// already there into huge pages (MADV_COLLAPSE) once the heap has grown
// past MinHeap; the 1,024-host permutation runs 7–19% faster.
// Results do not change: only where memory sits does.
//
// Set FABRICLAB_HUGEPAGES=off to leave the heap as the runtime maps it.
package hugepages

import (
	"os"
	"runtime/metrics"
	"sync"
)

// MinHeap is the mapped memory below which Maintain does nothing: a small
// run fits the TLB's reach anyway, and huge pages would only add to its
// resident size.
const MinHeap = 32 << 20

// regrow is how much the runtime's mapped memory must grow before Maintain
// looks at the mappings again.
const regrow = 4 << 20

var state struct {
	sync.Mutex
	off     bool   // disabled by the environment, or the kernel refused
	checked bool   // the environment has been read
	done    uint64 // mapped memory when the heap was last advised
	sample  []metrics.Sample
}

// Maintain advises the heap if it has grown enough since the last call
// that did. It is cheap enough to call every few thousand events and safe
// to call from several goroutines.
func Maintain() {
	state.Lock()
	defer state.Unlock()
	if !state.checked {
		state.checked = true
		state.off = os.Getenv("FABRICLAB_HUGEPAGES") == "off" || !supported
		state.sample = []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	}
	if state.off {
		return
	}
	metrics.Read(state.sample)
	if state.sample[0].Value.Kind() != metrics.KindUint64 {
		state.off = true
		return
	}
	mapped := state.sample[0].Value.Uint64()
	if !due(mapped, state.done) {
		return
	}
	state.done = mapped
	if !advise() {
		state.off = true
	}
}

// due says whether the heap, now mapped bytes, should be advised again
// when it last was at done bytes (0: never).
func due(mapped, done uint64) bool {
	return mapped >= MinHeap && mapped >= done+regrow
}

// reset forgets what Maintain has done and read (for tests).
func reset() {
	state.Lock()
	defer state.Unlock()
	state.off, state.checked, state.done = false, false, 0
}
