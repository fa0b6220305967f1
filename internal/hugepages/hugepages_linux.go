package hugepages

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page (2 MiB on x86-64 and
// on arm64 with 4 KiB pages), read from the kernel by supported.
var hugePage uintptr

// supported reports whether the kernel runs transparent huge pages in
// "madvise" mode, and learns their size.
func supported() bool {
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !madviseMode(string(enabled)) {
		return false
	}
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 || n > 1<<30 {
		return false
	}
	hugePage = uintptr(n)
	return true
}

// probe is a fresh heap object at each advise: its address lies in the
// Go heap's arenas, which is how advise finds them among the mappings.
var probe *[64]byte

// advise marks the Go heap's mappings MADV_HUGEPAGE and collapses the
// parts of them it has not collapsed before (MADV_COLLAPSE fills each huge
// page whole, whatever of it was resident). Only the heap: the runtime's other mappings
// and, under the race detector, its shadow memory are sparse, and
// collapsing them would make their resident size balloon. It reports
// false if the kernel has no transparent huge pages, so that later calls
// do not try again.
func advise() bool {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return false
	}
	var all []mapping
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		if m, ok := parseMapping(sc.Bytes()); ok {
			all = append(all, m)
		}
	}
	probe = new([64]byte)
	for _, m := range heapMappings(all, uintptr(unsafe.Pointer(probe))) {
		lo := (m.lo + hugePage - 1) &^ (hugePage - 1)
		hi := m.hi &^ (hugePage - 1)
		if hi <= lo {
			continue
		}
		if madvise(lo, hi-lo, unix.MADV_HUGEPAGE) != 0 {
			return false // EINVAL: no transparent huge pages here
		}
		// Collapse only what has not been: collapsing copies memory and
		// holds the process's memory map meanwhile. Best effort (it
		// needs free huge pages): a span the kernel could not fold for
		// want of them is tried again when the heap has grown.
		collapseNew(lo, hi, func(lo, n uintptr) unix.Errno { return madvise(lo, n, unix.MADV_COLLAPSE) })
	}
	return true
}

// mapping is one anonymous private mapping of /proc/self/maps: writable
// (in use) or not accessible (address space reserved, as the Go heap
// reserves its arenas before it uses them).
type mapping struct {
	lo, hi   uintptr
	writable bool
}

// heapMappings picks the Go heap's writable mappings out of all, the
// process's anonymous private mappings in address order: those in the
// run of adjoining mappings around the one holding addr, a heap address
// (the heap grows through adjoining arenas; this package's own advice
// splits a mapping into adjoining ones).
func heapMappings(all []mapping, addr uintptr) []mapping {
	k := -1
	for i, m := range all {
		if m.writable && m.lo <= addr && addr < m.hi {
			k = i
			break
		}
	}
	if k < 0 {
		return nil
	}
	first, last := k, k
	for first > 0 && all[first-1].hi == all[first].lo {
		first--
	}
	for last+1 < len(all) && all[last].hi == all[last+1].lo {
		last++
	}
	var heap []mapping
	for _, m := range all[first : last+1] {
		if m.writable {
			heap = append(heap, m)
		}
	}
	return heap
}

// parseMapping parses one line of /proc/self/maps ("lo-hi perms offset
// dev inode [path]") and reports an anonymous private mapping, writable
// or reserved: unnamed, or named as the Go heap where the kernel lets the
// runtime name its mappings.
func parseMapping(line []byte) (mapping, bool) {
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[4]) != "0" {
		return mapping{}, false
	}
	perms := string(f[1])
	if perms != "rw-p" && perms != "---p" {
		return mapping{}, false
	}
	if len(f) > 5 {
		name := string(bytes.Join(f[5:], []byte(" ")))
		if name != "[anon: Go: heap]" && name != "[anon: Go: heap reservation]" {
			return mapping{}, false
		}
	}
	dash := bytes.IndexByte(f[0], '-')
	if dash < 0 {
		return mapping{}, false
	}
	a, err1 := strconv.ParseUint(string(f[0][:dash]), 16, 64)
	b, err2 := strconv.ParseUint(string(f[0][dash+1:]), 16, 64)
	if err1 != nil || err2 != nil || b <= a {
		return mapping{}, false
	}
	return mapping{uintptr(a), uintptr(b), perms == "rw-p"}, true
}

// retryCollapse says whether MADV_COLLAPSE's result e leaves its span to
// be tried again: EAGAIN and ENOMEM mean no huge page could be had just
// then. Success, and EINVAL from a kernel without MADV_COLLAPSE (before
// Linux 6.1; MADV_HUGEPAGE still lets khugepaged fold the span later),
// are final.
func retryCollapse(e unix.Errno) bool {
	return e == unix.EAGAIN || e == unix.ENOMEM
}

// maxCollapseRetries bounds how many times, over the process, a span the
// kernel could not collapse for want of huge pages is left to be tried
// again: each try makes the kernel compact memory on the simulating
// goroutine.
const maxCollapseRetries = 3

// collapseNew collapses (collapse: MADV_COLLAPSE on a range) the parts of
// [lo, hi) not collapsed before, and records each as done, but for one
// the kernel had no huge pages for just then (retryCollapse), which a
// later call tries again, maxCollapseRetries times at most.
func collapseNew(lo, hi uintptr, collapse func(lo, n uintptr) unix.Errno) {
	for _, u := range uncovered(span{lo, hi}, state.collapsed) {
		if retryCollapse(collapse(u.lo, u.hi-u.lo)) && state.retries < maxCollapseRetries {
			state.retries++
			continue
		}
		state.collapsed = addSpan(state.collapsed, u)
	}
}

// madvise on a range given by address: the memory is never read or written
// through Go, so no pointer to it is made.
func madvise(addr, n uintptr, advice int) unix.Errno {
	_, _, e := unix.Syscall(unix.SYS_MADVISE, addr, n, uintptr(advice))
	return e
}
