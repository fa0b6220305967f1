// Package roottest is the one gate of the tests that build network
// namespaces: they need root and the ip, tc and sysctl commands, and CI
// (CI=true, which runs as root) must never skip them.
package roottest

import (
	"os"
	"os/exec"
	"testing"
)

// Need skips t without root, except in CI, where it fails; it fails when a
// command the namespace tests run is missing.
func Need(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the namespace lab tests need root, and CI=true runs as root")
		}
		t.Skip("the namespace lab tests need root (network namespaces); run them with sudo")
	}
	for _, c := range []string{"ip", "tc", "sysctl"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("the namespace lab tests need %s: %v", c, err)
		}
	}
}
