package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// run --json of a run on real hosts that stopped at a wrong agent token
// says which planned jobs have no result, as the tables' "# missing:"
// block does, and export of the saved run has the same "missing" jobs;
// every key it had before is unchanged ("interrupted": false, no
// "missing_rows"). With -q and --json - too.
func TestRunJSONOfAHaltedRunListsItsMissingJobs(t *testing.T) {
	path, agents := wrongTokenSetup(t)
	dir := t.TempDir()
	db, runJSONPath := filepath.Join(dir, "runs.db"), filepath.Join(dir, "run.json")
	code, out, errOut := execApp("run", path, "--engine", "hosts", "--agents", agents, "--db", db, "--json", runJSONPath)
	if code != exitError || !strings.HasSuffix(out, "# missing: 2 of 3 planned jobs have no result (the run stopped at a failed job before they started)\n#   base: 2MiB, 4MiB\n") {
		t.Fatalf("run: exit %d:\n%s\n%s", code, out, errOut)
	}
	top := readJSONObject(t, runJSONPath)
	want := haltedMissing("the run stopped at a failed job before they started")
	if !reflect.DeepEqual(top["missing"], want) {
		t.Errorf("run --json's \"missing\":\n got %v\nwant %v", top["missing"], want)
	}
	if _, ok := top["missing_rows"]; ok || top["interrupted"] != false {
		t.Errorf("missing_rows %v, interrupted %v; want none and false", top["missing_rows"], top["interrupted"])
	}
	exported := filepath.Join(dir, "export.json")
	execApp("export", "1", "--db", db, "--json", exported)
	if got := readJSONObject(t, exported)["missing"].(map[string]any); !reflect.DeepEqual(got["jobs"], want["jobs"]) || got["count"] != want["count"] {
		t.Errorf("export's \"missing\" %v, run's %v", got, want)
	}

	code, out, errOut = execApp("run", path, "--engine", "hosts", "--agents", agents, "--no-store", "-q", "--json", "-")
	var q map[string]any
	if err := json.Unmarshal([]byte(out), &q); code != exitError || err != nil || !reflect.DeepEqual(q["missing"], want) {
		t.Errorf("run -q --json -: exit %d, %v:\n%s\n%s", code, err, out, errOut)
	}
}

// run --json of an interrupted run lists the jobs Ctrl-C left without a
// row, with "interrupted": true as before; a complete run has no
// "missing" key.
func TestRunJSONOfAnInterruptedRunListsItsMissingJobs(t *testing.T) {
	dir := t.TempDir()
	path := writeScenario(t, threeSizesYAML)
	started := make(chan int, 1)
	runJSONPath := filepath.Join(dir, "run.json")
	if code, stderr := runReal(t, stopAfter(1, started), started, "run", "-j", "1", "--no-store", "-q", "--json", runJSONPath, path); code != exitInterrupted {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	top := readJSONObject(t, runJSONPath)
	want := map[string]any{
		"planned": 3.0, "count": 2.0, "reason": "interrupted: the run stopped before they started or measured anything",
		"jobs": []any{
			map[string]any{"variant": "base", "size_bytes": float64(4 << 20)},
			map[string]any{"variant": "base", "size_bytes": float64(16 << 20)},
		},
	}
	if !reflect.DeepEqual(top["missing"], want) || top["interrupted"] != true {
		t.Errorf("interrupted run: missing %v, interrupted %v", top["missing"], top["interrupted"])
	}
	if code, stderr := runReal(t, stopAfter(3, nil), nil, "run", "-j", "1", "--no-store", "-q", "--json", runJSONPath, path); code != 0 {
		t.Fatalf("complete run: exit %d: %s", code, stderr)
	}
	if _, ok := readJSONObject(t, runJSONPath)["missing"]; ok {
		t.Error("a complete run has a \"missing\" key")
	}
}

// run --format nccl-tests on real hosts whose every row failed (a wrong
// agent token) says "on real hosts", from run's --engine.
func TestRunNCCLTestsOnHostsWithOnlyFailedRows(t *testing.T) {
	path, agents := wrongTokenSetup(t)
	code, out, errOut := execApp("run", path, "--engine", "hosts", "--agents", agents, "--no-store", "--format", "nccl-tests")
	if code != exitError || !strings.Contains(out, ", variant base (alltoall, on real hosts)\n") || strings.Contains(out, "simulated") {
		t.Errorf("run --format nccl-tests: exit %d:\n%s\n%s", code, out, errOut)
	}
}
