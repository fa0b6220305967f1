package hugepages

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"
	"unsafe"
)

func TestAnonWritable(t *testing.T) {
	for _, c := range []struct {
		line   string
		lo, hi uintptr
		ok     bool
	}{
		{"c000000000-c004000000 rw-p 00000000 00:00 0 ", 0xc000000000, 0xc004000000, true},
		{"7f0a00000000-7f0a00021000 rw-p 00000000 00:00 0", 0x7f0a00000000, 0x7f0a00021000, true},
		{"00400000-01230000 r-xp 00000000 fe:00 9978519   /tmp/fl", 0, 0, false},  // the binary's code
		{"0214b000-026f0000 rw-p 01d4b000 fe:00 9978519   /tmp/fl", 0, 0, false},  // its data: a file
		{"2c613000-2c634000 rw-p 00000000 00:00 0          [heap]", 0, 0, false},  // named
		{"7ffc47137000-7ffc47158000 rw-p 00000000 00:00 0  [stack]", 0, 0, false}, // named
		{"4ab5b800000-4ab5c000000 ---p 00000000 00:00 0", 0, 0, false},            // reserved only
		{"7efd3c9ff000-7efd3ca00000 rw-s 00000000 00:01 5 ", 0, 0, false},         // shared: 5 fields but inode 5
		{"zz-10 rw-p 00000000 00:00 0", 0, 0, false},                              // malformed
		{"20-10 rw-p 00000000 00:00 0", 0, 0, false},                              // empty
		{"1000 rw-p 00000000 00:00 0", 0, 0, false},                               // no dash
		{"", 0, 0, false},
	} {
		lo, hi, ok := anonWritable([]byte(c.line))
		if lo != c.lo || hi != c.hi || ok != c.ok {
			t.Errorf("%q: got %#x-%#x %v, want %#x-%#x %v", c.line, lo, hi, ok, c.lo, c.hi, c.ok)
		}
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
			lo, hi, _ := anonWritable([]byte(line))
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no anonymous writable mapping holds %#x", addr)
	return ""
}

// hasTHP reports whether the kernel has transparent huge pages at all.
func hasTHP() bool {
	_, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil
}

func TestMaintainAdvisesALargeHeap(t *testing.T) {
	if !hasTHP() {
		t.Skip("this kernel has no transparent huge pages")
	}
	t.Setenv("FABRICLAB_HUGEPAGES", "")
	reset()
	defer reset()
	big := make([]byte, 2*MinHeap) // the heap now maps more than MinHeap
	for i := range big {
		big[i] = 1
	}
	Maintain()
	mid := uintptr(unsafe.Pointer(&big[len(big)/2]))
	if f := vmFlags(t, mid); !strings.Contains(f, " hg") {
		t.Fatalf("the heap is not advised: %s", f)
	}
	if state.off || state.done == 0 {
		t.Fatalf("state after advising: off %v, done %d", state.off, state.done)
	}
	done := state.done
	Maintain() // not grown since: nothing to do
	if state.done != done {
		t.Fatalf("advised again without growth: %d → %d", done, state.done)
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
