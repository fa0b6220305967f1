package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate warns of routes that can close a cycle of buffer dependencies
// under PFC, naming the variant and the cycle, and still exits 0; the
// examples that are not meant to deadlock get no warning.
func TestValidateDeadlockWarning(t *testing.T) {
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	path := "../../examples/pfc-deadlock.yaml"
	if code := a.execute(context.Background(), []string{"validate", path}); code != 0 {
		t.Fatalf("exit %d, want 0 (a warning is no error): %s", code, stderr.String())
	}
	if want := path + ": ok (2 variants, 2 jobs)\n"; stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	}
	want := "fabriclab: " + path + ": warning: variant bounced: routes can deadlock under PFC: cycle leaf0→spine0 → spine0→leaf1 → leaf1→spine1 → spine1→leaf0 (priority 3)\n"
	if stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}

	// Without PFC nothing is lossless: no warning.
	stdout.Reset()
	stderr.Reset()
	if code := a.execute(context.Background(), []string{"validate", "--set", "switch.pfc.enabled=false", path}); code != 0 || stderr.Len() != 0 {
		t.Errorf("PFC off: exit %d, stderr %q", code, stderr.String())
	}

	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "pfc-deadlock.yaml" {
			continue
		}
		stdout.Reset()
		stderr.Reset()
		if code := a.execute(context.Background(), []string{"validate", f}); code != 0 {
			t.Errorf("%s: exit %d: %s", f, code, stderr.String())
		}
		if strings.Contains(stderr.String(), "warning") {
			t.Errorf("%s: %s", f, stderr.String())
		}
	}
}

// twoFailures is a leaf-spine of two spines with a link of each down:
// the shortest paths then bounce through leaves, two cycles, one each way.
const twoFailures = `name: two-failures
topology:
  kind: leaf-spine
  hosts: 8
  hosts_per_leaf: 2
  spines: 2
  convergence: 20us
  failures:
    - {from: leaf0, to: spine0, at: 0}
    - {from: leaf1, to: spine1, at: 100us}
workload: {kind: alltoall, sizes: {list: [1MiB, 2MiB]}}
`

// A file without variants names no variant; past maxCycleWarnings cycles
// the rest are counted. Two links down on a leaf-spine of two spines make
// the shortest paths bounce through leaves: two cycles, one each way.
func TestValidateDeadlockWarningsCounted(t *testing.T) {
	defer func(n int) { maxCycleWarnings = n }(maxCycleWarnings)
	maxCycleWarnings = 1
	dir := t.TempDir()
	path := filepath.Join(dir, "two.yaml")
	y := twoFailures
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	if code := a.execute(context.Background(), []string{"validate", path}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "fabriclab: " + path + ": warning: routes can deadlock under PFC: cycle leaf2→spine0 → spine0→leaf3 → leaf3→spine1 → spine1→leaf2 (priority 3) from 120us, with leaf0–spine0, leaf1–spine1 down\n" +
		"fabriclab: " + path + ": warning: and 1 more cycle the routes can close\n"
	if stderr.String() != want {
		t.Errorf("stderr =\n%s\nwant\n%s", stderr.String(), want)
	}
}

// run warns as validate does, once, before the jobs start (and says
// nothing with --quiet); the run itself then finds the deadlock.
func TestRunDeadlockWarning(t *testing.T) {
	path := "../../examples/pfc-deadlock.yaml"
	warning := "fabriclab: " + path + ": warning: variant bounced: routes can deadlock under PFC: cycle leaf0→spine0 → spine0→leaf1 → leaf1→spine1 → spine1→leaf0 (priority 3)\n"
	for _, quiet := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		a := newApp(&stdout, &stderr)
		args := []string{"run", "--no-store", "-j", "1", path}
		if quiet {
			args = append(args, "-q")
		}
		a.execute(context.Background(), args)
		got := stderr.String()
		switch i := strings.Index(got, warning); {
		case strings.Count(got, warning) > 1:
			t.Errorf("the warning is printed %d times:\n%s", strings.Count(got, warning), got)
		case quiet && i >= 0:
			t.Errorf("-q: the warning is printed:\n%s", got)
		case !quiet && i < 0:
			t.Errorf("no warning:\n%s", got)
		case !quiet && strings.Contains(got[:i], "done in"):
			t.Errorf("the warning comes after a job ended:\n%s", got)
		}
		if !strings.Contains(got, "PFC deadlock at") {
			t.Errorf("the run did not find the deadlock:\n%s", got)
		}
	}
}

// On the flow engine, which models no pause frames, the warning says the
// run cannot show the deadlock; a variant with one job on the packet
// engine (auto, a size below sim.flow_above) gets the plain warning.
func TestDeadlockWarningUnderTheFlowEngine(t *testing.T) {
	const unseen = " (the jobs run on the flow engine, which models no pause frames and cannot deadlock; sim.engine packet, or under auto a higher sim.flow_above, can show it)"
	validate := func(t *testing.T, path string, sets ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := []string{"validate", path}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		if code := newApp(&stdout, &stderr).execute(context.Background(), args); code != 0 {
			t.Fatalf("%v: exit %d: %s", sets, code, stderr.String())
		}
		return stderr.String()
	}
	path := "../../examples/pfc-deadlock.yaml"
	warning := "fabriclab: " + path + ": warning: variant bounced: routes can deadlock under PFC: cycle leaf0→spine0 → spine0→leaf1 → leaf1→spine1 → spine1→leaf0 (priority 3)"
	for _, tc := range []struct {
		sets   []string
		suffix string
	}{
		{[]string{"sim.engine=flow"}, unseen},
		{[]string{"sim.engine=auto", "sim.flow_above=1KiB"}, unseen},
		{[]string{"sim.engine=auto", "sim.flow_above=1TiB"}, ""},
	} {
		if got, want := validate(t, path, tc.sets...), warning+tc.suffix+"\n"; got != want {
			t.Errorf("%v: stderr = %q, want %q", tc.sets, got, want)
		}
	}

	// Two sizes of one variant: the smaller below sim.flow_above runs on
	// the packet engine, which can show the deadlock.
	dir := t.TempDir()
	two := filepath.Join(dir, "two.yaml")
	y := twoFailures + "sim: {engine: auto}\n"
	if err := os.WriteFile(two, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	first := "fabriclab: " + two + ": warning: routes can deadlock under PFC: cycle leaf2→spine0 → spine0→leaf3 → leaf3→spine1 → spine1→leaf2 (priority 3) from 120us, with leaf0–spine0, leaf1–spine1 down"
	for _, tc := range []struct {
		above  string
		suffix string
	}{{"2MiB", ""}, {"1MiB", unseen}} {
		got := validate(t, two, "sim.flow_above="+tc.above)
		if line, _, _ := strings.Cut(got, "\n"); line != first+tc.suffix {
			t.Errorf("flow_above %s: first line %q, want %q", tc.above, line, first+tc.suffix)
		}
	}
}
