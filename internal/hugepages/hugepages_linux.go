package hugepages

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

const supported = true

// hugePage is the size of a transparent huge page on the platforms Go
// runs on with Linux (x86-64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// advise marks every anonymous, private, writable mapping of at least a
// huge page (the Go heap's arenas are such mappings; see anonWritable) and collapses what is
// already resident in it. It reports false if the kernel has no
// transparent huge pages, so that later calls do not try again.
func advise() bool {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		lo, hi, ok := anonWritable(sc.Bytes())
		if !ok {
			continue
		}
		lo = (lo + hugePage - 1) &^ (hugePage - 1)
		hi &^= hugePage - 1
		if hi <= lo {
			continue
		}
		if madvise(lo, hi-lo, unix.MADV_HUGEPAGE) != 0 {
			return false // EINVAL: no transparent huge pages here
		}
		// Best effort: collapsing needs free huge pages.
		madvise(lo, hi-lo, unix.MADV_COLLAPSE)
	}
	return true
}

// anonWritable parses one line of /proc/self/maps ("lo-hi perms offset
// dev inode [path]") and reports the range of an anonymous private
// read-write mapping: unnamed, or named as the Go heap where the kernel
// lets the runtime name its mappings (Go's other named mappings are its
// metadata, which stays as it is).
func anonWritable(line []byte) (lo, hi uintptr, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[1]) != "rw-p" || string(f[4]) != "0" {
		return 0, 0, false
	}
	if len(f) > 5 && string(bytes.Join(f[5:], []byte(" "))) != "[anon: Go: heap]" {
		return 0, 0, false
	}
	dash := bytes.IndexByte(f[0], '-')
	if dash < 0 {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(string(f[0][:dash]), 16, 64)
	b, err2 := strconv.ParseUint(string(f[0][dash+1:]), 16, 64)
	if err1 != nil || err2 != nil || b <= a {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}

// madvise on a range given by address: the memory is never read or written
// through Go, so no pointer to it is made.
func madvise(addr, n uintptr, advice int) unix.Errno {
	_, _, e := unix.Syscall(unix.SYS_MADVISE, addr, n, uintptr(advice))
	return e
}
