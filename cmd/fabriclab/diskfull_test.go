package main

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"fabriclab/internal/testmount"
	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/store"
)

// heavyRun gives every job thousands of random flow records, so that a
// few results fill a small disk.
func heavyRun(_ context.Context, j scenario.Job, _ lab.Progress) (metrics.SizeResult, error) {
	r := fakeResult(j)
	rng := rand.New(rand.NewPCG(uint64(j.SizeIndex), 7))
	for i := range 20000 {
		r.Records = append(r.Records, metrics.FlowRecord{ID: i, Src: rng.IntN(1000), Dst: rng.IntN(1000),
			Bytes: rng.Int64N(1 << 30), StartS: rng.Float64(), EndS: 1 + rng.Float64(), Done: true})
	}
	return r, nil
}

// TestRunOnAFullDiskIsIncomplete: a sweep that fills the disk mid-way is
// saved as incomplete, runs/show/export say how many rows are missing, and
// run and export exit 1 (issue 10, item 3).
func TestRunOnAFullDiskIsIncomplete(t *testing.T) {
	db := filepath.Join(testmount.Tmpfs(t, "2m"), "runs.db")
	a, _, stderr := newTestApp(testPlan(1, 64), heavyRun)
	code := a.execute(context.Background(), []string{"run", "-q", "-j", "1", "--db", db, "x.yaml"})
	if code != exitError || !strings.Contains(stderr.String(), "is incomplete:") || !strings.Contains(stderr.String(), "of 64 result rows could not be saved") {
		t.Fatalf("run on a full disk: exit %d, stderr %q", code, stderr)
	}
	st, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Meta(1)
	st.Close()
	if err != nil || m.Missing() == 0 || m.Status == store.StatusDone {
		t.Fatalf("saved run %+v (%v): want rows missing and not done", m, err)
	}
	code, out, _ := storeApp(t, nil, "runs", "--db", db)
	if code != 0 || !strings.Contains(out, "incomplete (") || !strings.Contains(out, "of 64 rows saved)") {
		t.Errorf("runs: exit %d\n%s", code, out)
	}
	code, out, _ = storeApp(t, nil, "show", "1", "--db", db)
	if code != 0 || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "of 64 rows saved") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	code, out, errOut := storeApp(t, nil, "export", "1", "--db", db, "--json", "-")
	if code != exitError || !strings.Contains(out, `"missing_rows": `) || !strings.Contains(errOut, "were never saved") {
		t.Errorf("export: exit %d, stderr %q", code, errOut)
	}
}

// TestReadCommandsOnAReadOnlyDatabase: runs, show, export, compare and
// report read a database they cannot write (issue 10, item 12); a writing
// command says why it cannot.
func TestReadCommandsOnAReadOnlyDatabase(t *testing.T) {
	dir := testmount.Tmpfs(t, "16m")
	db := filepath.Join(dir, "runs.db")
	if code, _, stderr := storeApp(t, testPlan(2, 2), "run", "-q", "--db", db, "x.yaml"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if err := testmount.ReadOnly(dir); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	for _, args := range [][]string{
		{"runs"}, {"show", "1"}, {"export", "1", "--json", "-"}, {"compare", "1"}, {"report", "1", "-o", html},
	} {
		if code, _, stderr := storeApp(t, nil, append(args, "--db", db)...); code != 0 {
			t.Errorf("%v on a read-only database: exit %d, stderr %q", args, code, stderr)
		}
	}
	code, _, stderr := storeApp(t, nil, "tag", "1", "x", "--db", db)
	if code != exitError || strings.Count(stderr, "\n") != 1 {
		t.Errorf("tag on a read-only database: exit %d, stderr %q", code, stderr)
	}
}
