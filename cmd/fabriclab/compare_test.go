package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lab.db")
	for range 2 {
		if code, _, stderr := storeApp(t, testPlan(2, 2), "run", "-q", "--db", db, "x.yaml"); code != 0 {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
	}
	code, out, stderr := storeApp(t, nil, "compare", "1", "2:v1", "--db", db)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// One line per run first: its scenario, seed and overrides.
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "# run 1: ") || !strings.HasPrefix(lines[1], "# run 2: ") ||
		!strings.HasSuffix(lines[0], "; seed 42; no --set or --sweep") {
		t.Fatalf("compare's run lines:\n%s", out)
	}
	lines = lines[2:]
	if len(lines) != 4 || lines[0] != "# compare bus bandwidth (GB/s); baseline 1:v0" {
		t.Fatalf("compare:\n%s", out)
	}
	if h := strings.Fields(lines[1]); strings.Join(h, " ") != "# size 1:v0 1:v1 Δ 1:v1 2:v1 Δ 2:v1" {
		t.Errorf("header %q", lines[1])
	}
	// fakeResult: v1 takes 1.1× v0's time, so its bus bandwidth is 1/1.1.
	if !strings.Contains(lines[2], " 8MiB ") || strings.Count(lines[2], "(-9.1%)") != 2 {
		t.Errorf("row %q", lines[2])
	}

	code, out, _ = storeApp(t, nil, "compare", "1:v0", "2:v0", "--db", db, "--metric", "pfc")
	if code != 0 || !strings.Contains(out, "\n# compare PFC pause frames; baseline 1:v0\n") || !strings.Contains(out, "  +0\n") {
		t.Errorf("--metric pfc: exit %d\n%s", code, out)
	}
	code, out, _ = storeApp(t, nil, "compare", "1", "--db", db, "--all")
	if code != 0 || strings.Count(out, "# compare ") != 5 {
		t.Errorf("--all: exit %d\n%s", code, out)
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"compare", "1", "3"}, exitError, "run 3: no such run"},
		{[]string{"compare", "1", "2:nope"}, exitError, `run 2 has no variant "nope" (variants: v0, v1)`},
		{[]string{"compare", "1:v0"}, exitError, "nothing to compare"},
		{[]string{"compare"}, exitUsage, "at least one"},
		{[]string{"compare", "x", "1"}, exitUsage, "not a run id"},
		{[]string{"compare", "1:", "2"}, exitUsage, "empty variant"},
		{[]string{"compare", "1", "2", "--metric", "drops"}, exitUsage, "unknown --metric"},
		{[]string{"compare", "1", "2", "--metric", "cct", "--all"}, exitUsage, "exclude"},
	} {
		code, out, stderr := storeApp(t, nil, append(c.args, "--db", db)...)
		if code != c.code || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, stderr, c.code, c.msg)
		}
	}
}
