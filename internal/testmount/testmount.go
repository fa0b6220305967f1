// Package testmount gives tests small filesystems of their own: a tmpfs of
// a chosen size (to fill a disk for real) that can be remounted read-only
// (read-only for root too, who ignores permission bits). Mounting needs
// root; Tmpfs skips the test otherwise, except with CI=true (CI runs as
// root), where it fails.
package testmount

import (
	"os"
	"path/filepath"
	"testing"
)

// Tmpfs mounts a tmpfs of size ("2m") on a new directory, unmounted when t
// ends (after the cleanups registered later, such as closing a database on
// it).
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mount(dir, size); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot mount a tmpfs (CI=true runs as root): %v", err)
		}
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := unmount(dir); err != nil {
			t.Logf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// ReadOnly remounts a Tmpfs directory read-only.
func ReadOnly(dir string) error { return remountReadOnly(dir) }
