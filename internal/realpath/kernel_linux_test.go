package realpath

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestResolveAgreesWithTheKernel builds a random tree of directories,
// files and symbolic links (relative and absolute targets, chains, loops,
// links to what does not exist) and checks Resolve against where the
// kernel opens each of 20,000 random paths through it (O_PATH,
// then the descriptor's name in /proc/self/fd).
func TestResolveAgreesWithTheKernel(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c", "d"}
	var dirs, all []string
	dirs = append(dirs, root)
	for range 12 {
		d := filepath.Join(dirs[r.IntN(len(dirs))], names[r.IntN(len(names))])
		if os.Mkdir(d, 0o755) == nil {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		all = append(all, d)
		if f := filepath.Join(d, "f"); os.WriteFile(f, nil, 0o644) == nil {
			all = append(all, f)
		}
	}
	// A target: a relative climb, an absolute path, or a name that is no file.
	target := func(from string) string {
		to := all[r.IntN(len(all))]
		switch r.IntN(4) {
		case 0:
			return to
		case 1:
			return filepath.Join(to, "missing")
		}
		rel, err := filepath.Rel(from, to)
		if err != nil {
			return to
		}
		return rel
	}
	for i := range 30 {
		d := dirs[r.IntN(len(dirs))]
		if err := os.Symlink(target(d), filepath.Join(d, fmt.Sprintf("l%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var parts []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && p != root {
			parts = append(parts, filepath.Base(p))
		}
		return nil
	})
	parts = append(parts, "..", ".", "missing")
	agreed := 0
	for range 20000 {
		n := 1 + r.IntN(5)
		var b strings.Builder
		b.WriteString(root)
		for range n {
			b.WriteString("/" + parts[r.IntN(len(parts))])
		}
		p := b.String()
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // the kernel cannot open it: Resolve's answer is its own
		}
		kernel, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		if got := Resolve(p); got != kernel {
			t.Errorf("Resolve(%s) = %s; the kernel opens %s", p, got, kernel)
		}
		agreed++
	}
	if agreed < 1000 {
		t.Errorf("only %d of 20000 paths opened: the tree is too sparse to tell", agreed)
	}
}
