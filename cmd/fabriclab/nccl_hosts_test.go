package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// show --format nccl-tests of a run on real hosts whose every row failed
// (an agent refused the token: no row has a hosts object) says the run
// was on real hosts, from the engine saved with the run, not "simulated".
func TestShowNCCLTestsOfAHostsRunWithOnlyFailedRows(t *testing.T) {
	path, agents := wrongTokenSetup(t)
	db := filepath.Join(t.TempDir(), "runs.db")
	if code, _, errOut := execApp("run", path, "--engine", "hosts", "--agents", agents, "--db", db, "-q"); code != exitError {
		t.Fatalf("run: exit %d:\n%s", code, errOut)
	}
	code, out, errOut := execApp("show", "1", "--db", db, "--format", "nccl-tests")
	if code != 0 || !strings.Contains(out, ", variant base (alltoall, on real hosts)\n") || strings.Contains(out, "simulated") ||
		!strings.Contains(out, "failed: agent 127.0.0.1:") {
		t.Errorf("show --format nccl-tests: exit %d:\n%s\n%s", code, out, errOut)
	}

	// A simulated run is still labelled so.
	sim := writeScenario(t, threeSizesYAML)
	if code, stderr := runReal(t, stopAfter(3, nil), nil, "run", "-j", "1", "--db", db, sim); code != 0 {
		t.Fatalf("simulated run: exit %d: %s", code, stderr)
	}
	code, out, errOut = execApp("show", "2", "--db", db, "--format", "nccl-tests")
	if code != 0 || !strings.Contains(out, "(alltoall, 8 ranks, simulated)\n") || strings.Contains(out, "real hosts") {
		t.Errorf("show --format nccl-tests of a simulated run: exit %d:\n%s\n%s", code, out, errOut)
	}
}
