// Package hugepages asks the kernel to back a large Go heap with
// transparent huge pages.
//
// A simulation of a large fabric reads its packets, ports and route tables
// at random across tens of megabytes: with 4 KiB pages nearly every such
// read also misses the TLB, and the page walk misses the caches too. Linux
// distributions commonly ship transparent huge pages in "madvise" mode, in
// which only memory a process marks gets them, and the Go runtime marks
// none of its heap. Maintain marks it (MADV_HUGEPAGE) and folds the part
// it has not folded before into huge pages (MADV_COLLAPSE) once the
// runtime has mapped MinHeap; the 1,024-host permutation runs 7–19%
// faster. It acts only in "madvise" mode: under "always" the kernel does
// it already, and "never" is the administrator's choice (MADV_COLLAPSE
// would override it). Results do not change: only where memory sits does.
//
// Set FABRICLAB_HUGEPAGES=off to leave the heap as the runtime maps it.
package hugepages

import (
	"os"
	"runtime/metrics"
	"strings"
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
	off     bool   // disabled by the environment or the kernel's setting, or the kernel refused
	checked bool   // the environment and the kernel's setting have been read
	done    uint64 // mapped memory when the heap was last advised
	advices int    // how many times Maintain has advised the heap
	sample  []metrics.Sample
	// collapsed are the ranges already folded into huge pages (or given
	// up on), sorted and disjoint: each call collapses only what the heap
	// added since, and what an earlier call could not fold for want of
	// huge pages (retries of those so far).
	collapsed []span
	retries   int
}

// span is an address range [lo, hi).
type span struct{ lo, hi uintptr }

// Maintain advises the heap if it has grown enough since the last call
// that did. It is cheap enough to call every few thousand events and safe
// to call from several goroutines: a call that finds another one at work
// returns at once rather than wait for it (jobs run side by side).
func Maintain() {
	if !state.TryLock() {
		return
	}
	defer state.Unlock()
	if !state.checked {
		state.checked = true
		state.off = os.Getenv("FABRICLAB_HUGEPAGES") == "off" || !supported()
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
	state.advices++
	if !advise() {
		state.off = true
	}
}

// due says whether the heap should be advised again, the runtime having
// mapped mapped bytes now and done bytes when it last was (0: never).
func due(mapped, done uint64) bool {
	return mapped >= MinHeap && mapped >= done+regrow
}

// reset forgets what Maintain has done and read (for tests).
func reset() {
	state.Lock()
	defer state.Unlock()
	state.off, state.checked, state.done, state.advices, state.collapsed, state.retries = false, false, 0, 0, nil, 0
}

// madviseMode reports whether the kernel's transparent huge page setting
// (the contents of /sys/kernel/mm/transparent_hugepage/enabled, the
// chosen mode in brackets) is "madvise", the only mode Maintain acts in.
func madviseMode(enabled string) bool {
	return strings.Contains(enabled, "[madvise]")
}

// uncovered is the part of s that done (sorted, disjoint) does not cover,
// in order.
func uncovered(s span, done []span) []span {
	var out []span
	lo := s.lo
	for _, d := range done {
		if d.hi <= lo || d.lo >= s.hi {
			continue
		}
		if d.lo > lo {
			out = append(out, span{lo, d.lo})
		}
		lo = max(lo, d.hi)
		if lo >= s.hi {
			return out
		}
	}
	if lo < s.hi {
		out = append(out, span{lo, s.hi})
	}
	return out
}

// addSpan merges s into done (sorted, disjoint), keeping it so.
func addSpan(done []span, s span) []span {
	out := make([]span, 0, len(done)+1)
	for _, d := range done {
		switch {
		case d.hi < s.lo:
			out = append(out, d)
		case s.hi < d.lo:
			out = append(out, s)
			s = d
		default: // touching or overlapping: one span
			s = span{min(s.lo, d.lo), max(s.hi, d.hi)}
		}
	}
	return append(out, s)
}
