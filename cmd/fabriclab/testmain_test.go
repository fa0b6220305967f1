package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// realHome is HOME before TestMain changed it, for the go command (its build
// and module caches live there by default).
var realHome string

// TestMain points the default results database at a temporary directory so
// that no test ever writes to the real home directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fabriclab-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("FABRICLAB_DB", filepath.Join(dir, "runs.db"))
	os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg"))
	realHome = os.Getenv("HOME")
	os.Setenv("HOME", filepath.Join(dir, "home"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
