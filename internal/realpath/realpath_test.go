package realpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	j := func(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }
	must(os.MkdirAll(j("a", "b"), 0o755))
	must(os.MkdirAll(j("c"), 0o755))
	must(os.WriteFile(j("a", "b", "f"), nil, 0o644))
	must(os.Symlink(j("a", "b"), j("c", "abs")))              // absolute target
	must(os.Symlink(filepath.Join("..", "a"), j("c", "rel"))) // relative target
	must(os.Symlink("rel", j("c", "chain")))
	must(os.Symlink(j("a", "b", "new"), j("c", "dangling")))
	must(os.Symlink("loop2", j("c", "loop1")))
	must(os.Symlink("loop1", j("c", "loop2")))

	for _, tc := range []struct{ in, want string }{
		{j("a", "b", "f"), j("a", "b", "f")},
		{j("c", "abs", "f"), j("a", "b", "f")},
		// The link's target's parent, not c: the text is never cleaned first.
		{j("c", "abs") + "/../f", j("a", "f")},
		{j("c", "rel", "b", "f"), j("a", "b", "f")},
		{j("c", "chain") + "/b/../b/f", j("a", "b", "f")},
		{j("c", "dangling"), j("a", "b", "new")},
		{j("c", "abs") + "/missing/../x", j("a", "b", "x")},
		{j("c", "abs") + "/./f", j("a", "b", "f")},
		{j("c", "loop1"), j("c", "loop1")},
		{"/", "/"},
	} {
		if got := Resolve(tc.in); got != tc.want {
			t.Errorf("Resolve(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}

	// j cleans its text: the cases with ".." are written out.
	// Relative paths start at the working directory, itself resolved.
	t.Chdir(j("c", "abs"))
	for in, want := range map[string]string{
		"f":        j("a", "b", "f"),
		"../b/f":   j("a", "b", "f"),
		"new.json": j("a", "b", "new.json"),
		"./x/../y": j("a", "b", "y"),
	} {
		if got := Resolve(in); got != want {
			t.Errorf("in %s: Resolve(%s) = %s, want %s", j("c", "abs"), in, got, want)
		}
	}
}
