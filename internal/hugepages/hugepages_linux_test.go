package hugepages

import (
	"bufio"
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line string
		m    mapping
		ok   bool
	}{
		{"c000000000-c004000000 rw-p 00000000 00:00 0 ", mapping{0xc000000000, 0xc004000000, true}, true},
		{"7f0a00000000-7f0a00021000 rw-p 00000000 00:00 0", mapping{0x7f0a00000000, 0x7f0a00021000, true}, true},
		{"4ab5b800000-4ab5c000000 ---p 00000000 00:00 0", mapping{0x4ab5b800000, 0x4ab5c000000, false}, true}, // reserved
		{"c000000000-c000400000 rw-p 00000000 00:00 0  [anon: Go: heap]", mapping{0xc000000000, 0xc000400000, true}, true},
		{"c000400000-c004000000 ---p 00000000 00:00 0  [anon: Go: heap reservation]", mapping{0xc000400000, 0xc004000000, false}, true},
		{"c000400000-c000800000 rw-p 00000000 00:00 0  [anon: Go: page summary]", mapping{}, false},
		{"00400000-01230000 r-xp 00000000 fe:00 9978519   /tmp/fl", mapping{}, false}, // the binary's code
		{"0214b000-026f0000 rw-p 01d4b000 fe:00 9978519   /tmp/fl", mapping{}, false}, // its data: a file
		{"2c613000-2c634000 rw-p 00000000 00:00 0          [heap]", mapping{}, false},
		{"7ffc47137000-7ffc47158000 rw-p 00000000 00:00 0  [stack]", mapping{}, false},
		{"7efd3c9ff000-7efd3ca00000 rw-s 00000000 00:01 0 ", mapping{}, false}, // shared
		{"7efd3c9ff000-7efd3ca00000 r--p 00000000 00:00 0 ", mapping{}, false},
		{"zz-10 rw-p 00000000 00:00 0", mapping{}, false},
		{"20-10 rw-p 00000000 00:00 0", mapping{}, false},
		{"1000 rw-p 00000000 00:00 0", mapping{}, false},
		{"", mapping{}, false},
	} {
		m, ok := parseMapping([]byte(c.line))
		if m != c.m || ok != c.ok {
			t.Errorf("%q: got %+v %v, want %+v %v", c.line, m, ok, c.m, c.ok)
		}
	}
}

func TestHeapMappings(t *testing.T) {
	w := func(lo, hi uintptr) mapping { return mapping{lo, hi, true} }
	r := func(lo, hi uintptr) mapping { return mapping{lo, hi, false} }
	all := []mapping{
		w(0x1000, 0x3000),       // the binary's bss: not adjoining the heap
		r(0x4000000, 0x4400000), // a reservation before the heap
		w(0x4400000, 0x4800000), // the heap, advised before (split)
		w(0x4800000, 0x5000000), // the heap
		r(0x5000000, 0x8000000), // its arena's unused rest
		w(0x8000000, 0x8400000), // the next arena, in use
		w(0x9000000, 0x9800000), // a gap before: another mapping
		w(0x7f0000000000, 0x7f0000800000),
	}
	got := heapMappings(all, 0x4900000)
	want := []mapping{all[2], all[3], all[5]}
	if !slices.Equal(got, want) {
		t.Errorf("heap around 0x4900000: %+v, want %+v", got, want)
	}
	if got := heapMappings(all, 0x7f0000000100); !slices.Equal(got, all[7:]) {
		t.Errorf("a mapping alone: %+v", got)
	}
	if got := heapMappings(all, 0x4100000); got != nil { // in a reservation: no heap object lives there
		t.Errorf("address in a reservation: %+v", got)
	}
	if got := heapMappings(all, 0x2000000); got != nil {
		t.Errorf("address in no mapping: %+v", got)
	}
}

// vmFlags returns the VmFlags of the mapping holding addr.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			m, _ := parseMapping([]byte(line))
			in = m.lo <= addr && addr < m.hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no anonymous writable mapping holds %#x", addr)
	return ""
}

// Maintain acts in the kernel's "madvise" mode and only there; in it, a
// large heap is advised and a mapping that is not the heap's is not.
func TestMaintainAdvisesALargeHeap(t *testing.T) {
	t.Setenv("FABRICLAB_HUGEPAGES", "")
	reset()
	defer reset()
	other, err := unix.Mmap(-1, 0, 16<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(other)
	for i := range other {
		other[i] = 1
	}
	big := make([]byte, 2*MinHeap) // the heap now maps more than MinHeap
	for i := range big {
		big[i] = 1
	}
	Maintain()
	enabled, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if !madviseMode(string(enabled)) {
		if !state.off || state.done != 0 {
			t.Fatalf("the kernel's mode is %q, yet Maintain acted", enabled)
		}
		return
	}
	// Called again at once, before this test reads /proc (which
	// allocates): the heap has not grown by regrow since, so there is
	// nothing to do. The runtime may still have mapped a chunk meanwhile
	// (the first call's own reading of the mappings allocates); then a
	// new advice is right, and the growth it saw must be real.
	done, advices := state.done, state.advices
	Maintain()
	if state.advices != advices {
		if grown := state.done - done; grown < regrow {
			t.Fatalf("advised again after %d bytes of growth (regrow %d): %d → %d", grown, regrow, done, state.done)
		}
		t.Logf("the runtime mapped %d bytes more between the calls: advised again", state.done-done)
	}
	mid := uintptr(unsafe.Pointer(&big[len(big)/2]))
	if f := vmFlags(t, mid); !strings.Contains(f, " hg") {
		t.Fatalf("the heap is not advised: %s", f)
	}
	if f := vmFlags(t, uintptr(unsafe.Pointer(&other[len(other)/2]))); strings.Contains(f, " hg") {
		t.Fatalf("a mapping that is not the heap's is advised: %s", f)
	}
	if len(state.collapsed) == 0 {
		t.Fatal("nothing collapsed")
	}
	if state.off || state.done == 0 {
		t.Fatalf("state after advising: off %v, done %d", state.off, state.done)
	}
}

func TestMaintainOff(t *testing.T) {
	t.Setenv("FABRICLAB_HUGEPAGES", "off")
	reset()
	defer reset()
	big := make([]byte, 2*MinHeap)
	for i := range big {
		big[i] = 1
	}
	Maintain()
	// done stays 0: advise was never called.
	if !state.off || state.done != 0 {
		t.Fatalf("FABRICLAB_HUGEPAGES=off: off %v, done %d", state.off, state.done)
	}
}

// A span the kernel could not collapse for want of huge pages is tried
// again by a later call, maxCollapseRetries times at most over the
// process; success and a kernel without MADV_COLLAPSE are final.
func TestCollapseRetries(t *testing.T) {
	for e, want := range map[unix.Errno]bool{0: false, unix.EAGAIN: true, unix.ENOMEM: true, unix.EINVAL: false, unix.EPERM: false} {
		if got := retryCollapse(e); got != want {
			t.Errorf("retryCollapse(%v) = %v, want %v", e, got, want)
		}
	}
	reset()
	defer reset()
	const mb = 1 << 20
	var tried []span
	answer := func(e unix.Errno) func(lo, n uintptr) unix.Errno {
		return func(lo, n uintptr) unix.Errno {
			tried = append(tried, span{lo, lo + n})
			return e
		}
	}
	collapseNew(2*mb, 6*mb, answer(unix.EAGAIN)) // no huge pages now
	if len(state.collapsed) != 0 || state.retries != 1 {
		t.Fatalf("after EAGAIN: collapsed %v, retries %d", state.collapsed, state.retries)
	}
	collapseNew(2*mb, 8*mb, answer(0)) // grown: the old span and the new part, at once
	if want := []span{{2 * mb, 8 * mb}}; !slices.Equal(state.collapsed, want) || !slices.Equal(tried, []span{{2 * mb, 6 * mb}, {2 * mb, 8 * mb}}) {
		t.Fatalf("after success: collapsed %v, tried %v", state.collapsed, tried)
	}
	collapseNew(2*mb, 8*mb, answer(unix.EAGAIN)) // nothing new: not tried
	if len(tried) != 2 {
		t.Fatalf("a collapsed span tried again: %v", tried)
	}
	collapseNew(8*mb, 10*mb, answer(unix.EINVAL)) // no MADV_COLLAPSE: final
	if want := []span{{2 * mb, 10 * mb}}; !slices.Equal(state.collapsed, want) || state.retries != 1 {
		t.Fatalf("after EINVAL: collapsed %v, retries %d", state.collapsed, state.retries)
	}
	for k := 0; k < maxCollapseRetries+2; k++ {
		collapseNew(10*mb, 12*mb, answer(unix.ENOMEM))
	}
	// Two more retries (three in all), then given up on.
	if want := []span{{2 * mb, 12 * mb}}; !slices.Equal(state.collapsed, want) || state.retries != maxCollapseRetries || len(tried) != 3+maxCollapseRetries {
		t.Fatalf("after ENOMEM: collapsed %v, retries %d, %d tries", state.collapsed, state.retries, len(tried))
	}
}
