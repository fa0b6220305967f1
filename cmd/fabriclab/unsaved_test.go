package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/scenario"
	"fabriclab/store"
)

const threeSizesYAML = `name: three-sizes
topology: {hosts: 8, hosts_per_leaf: 4, spines: 2}
workload:
  kind: alltoall
  sizes: {list: [1MiB, 4MiB, 16MiB]}
`

// runReal runs args with the real loader and run as the jobs, cancelling
// the run as soon as a job signals on started; it returns the exit code
// and stderr.
func runReal(t *testing.T, run JobFunc, started chan int, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	a.runJob = run
	a.isTerminal = func(io.Writer) bool { return false }
	a.heartbeat = 0
	a.now = func() time.Time { return fixedNow }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if started != nil {
		go func() {
			<-started
			cancel() // Ctrl-C while a job runs
		}()
	}
	return a.execute(ctx, args), stderr.String()
}

// stopAfter runs the first n jobs (in file order with -j 1) and blocks the
// next until the run is cancelled, returning nothing but the cancellation:
// a job Ctrl-C stops before it measured anything, which leaves no row.
func stopAfter(n int, started chan<- int) JobFunc {
	var done atomic.Int32
	return func(ctx context.Context, j scenario.Job, progress lab.Progress) (metrics.SizeResult, error) {
		if done.Add(1) <= int32(n) {
			return fakeResult(j), nil
		}
		started <- j.SizeIndex
		<-ctx.Done()
		return metrics.SizeResult{}, ctx.Err()
	}
}

func writeScenario(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestShowListsWhatAnInterruptedRunNeverRan: show of a size sweep stopped
// by Ctrl-C after its first size lists, after the saved row, the sizes
// that have no result and why.
func TestShowListsWhatAnInterruptedRunNeverRan(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	path := writeScenario(t, threeSizesYAML)
	started := make(chan int, 1)
	if code, stderr := runReal(t, stopAfter(1, started), started, "run", "-q", "-j", "1", "--db", db, path); code != exitInterrupted {
		t.Fatalf("run: exit %d, want %d: %s", code, exitInterrupted, stderr)
	}
	code, out, stderr := storeApp(t, nil, "show", "1", "--db", db)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	if !strings.Contains(strings.SplitN(out, "\n", 2)[0], ", interrupted") {
		t.Errorf("show's first line does not say interrupted:\n%s", out)
	}
	row := strings.Index(out, "\n      1048576  1MiB ")
	missing := strings.Index(out, "\n\n# missing: 2 of 3 planned jobs have no result (interrupted: the run stopped before they started or measured anything)\n")
	if row < 0 || missing < row {
		t.Fatalf("show does not list the sizes it never ran after the saved row:\n%s", out)
	}
	if rest := out[missing+2:]; !strings.HasSuffix(rest, "#   base: 4MiB, 16MiB\n") || strings.Count(rest, "\n") != 2 {
		t.Errorf("show's missing block:\n%s", rest)
	}
	// The same after the nccl-tests format's footer.
	_, out, _ = storeApp(t, nil, "show", "1", "--db", db, "--format", "nccl-tests")
	if !strings.HasSuffix(out, "# missing: 2 of 3 planned jobs have no result (interrupted: the run stopped before they started or measured anything)\n#   base: 4MiB, 16MiB\n") {
		t.Errorf("show --format nccl-tests:\n%s", out)
	}

	// A run that saved every row, or whose failed job saved its error, has
	// nothing missing.
	fail := func(_ context.Context, j scenario.Job, _ lab.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex == 1 {
			return metrics.SizeResult{}, errors.New("no route")
		}
		return fakeResult(j), nil
	}
	if code, stderr := runReal(t, fail, nil, "run", "-q", "--db", db, path); code != exitError {
		t.Fatalf("run with a failing job: exit %d: %s", code, stderr)
	}
	_, out, _ = storeApp(t, nil, "show", "2", "--db", db)
	if !strings.Contains(out, "4MiB  ! no route") || strings.Contains(out, "# missing") {
		t.Errorf("show of a failed run:\n%s", out)
	}
}

// TestShowListsTheSweepPointsAnInterruptedRunNeverRan: in a sweep the
// missing jobs are named by their point, one line per point.
func TestShowListsTheSweepPointsAnInterruptedRunNeverRan(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	path := writeScenario(t, sweepYAML) // 4 points × 2 sizes
	started := make(chan int, 1)
	if code, stderr := runReal(t, stopAfter(3, started), started, "run", "-q", "-j", "1", "--db", db, path); code != exitInterrupted {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	_, out, _ := storeApp(t, nil, "show", "1", "--db", db)
	want := "\n# missing: 5 of 8 planned jobs have no result (interrupted: the run stopped before they started or measured anything)\n" +
		"#   pfc qps=4: 4MiB\n#   lossy qps=1: 1MiB, 4MiB\n#   lossy qps=4: 1MiB, 4MiB\n"
	if !strings.HasSuffix(out, want) || !strings.Contains(out, "# sweep: ") {
		t.Errorf("show:\n%s\nwant it to end with\n%s", out, want)
	}

	// A run that saved every row lists nothing.
	if code, stderr := runReal(t, quickRun, nil, "run", "-q", "--db", db, path); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if _, out, _ := storeApp(t, nil, "show", "2", "--db", db); strings.Contains(out, "# missing") {
		t.Errorf("show of a complete run:\n%s", out)
	}
}

// TestShowListsRowsThatCouldNotBeSaved: a run whose store writes failed
// (saved as incomplete) says which jobs lost their rows; when its scenario
// cannot be read again, how many and which variants have none.
func TestShowListsRowsThatCouldNotBeSaved(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	save := func(text string, expected int, variants []string, rows [][2]int, status string) {
		t.Helper()
		vs := make([]report.VariantResult, len(variants))
		for i, v := range variants {
			vs[i] = report.VariantResult{Name: v, Collective: "alltoall"}
		}
		id, err := st.BeginRun(store.Meta{Name: "x", ScenarioFile: "s.yaml", ScenarioText: text, Expected: expected}, vs)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range rows {
			j := scenario.Job{VariantIndex: k[0], SizeIndex: k[1], Size: 1 << 20 << (2 * k[1])}
			if err := st.AddResult(id, k[0], k[1], fakeResult(j)); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.FinishRun(id, status, "2025-06-01T12:00:00Z"); err != nil {
			t.Fatal(err)
		}
	}
	save(threeSizesYAML, 3, []string{"base"}, [][2]int{{0, 1}}, store.StatusIncomplete)
	save("name: [", 4, []string{"a", "b"}, [][2]int{{0, 0}}, store.StatusInterrupted)
	st.Close()

	_, out, _ := storeApp(t, nil, "show", "1", "--db", db)
	if !strings.HasSuffix(out, "\n# missing: 2 of 3 planned jobs have no result (their results could not be saved (a full disk, a lost database server); run said why when it ended)\n"+
		"#   base: 1MiB, 16MiB\n") {
		t.Errorf("show of an incomplete run:\n%s", out)
	}
	_, out, _ = storeApp(t, nil, "show", "2", "--db", db)
	if !strings.Contains(out, "\n# missing: 3 of 4 planned jobs have no result (interrupted: the run stopped before they started or measured anything); which ones is unknown: the saved scenario could not be read again: ") ||
		!strings.HasSuffix(out, "\n#   no result at all: b\n") {
		t.Errorf("show of a run whose scenario does not read:\n%s", out)
	}
}

// run's own tables end as show's do: an interrupted run lists the jobs it
// never ran (or that Ctrl-C stopped before they measured anything) after
// its tables, with the same words as show of the saved run.
func TestRunListsWhatItNeverRan(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	path := writeScenario(t, threeSizesYAML)
	started := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	a.runJob = stopAfter(1, started)
	a.isTerminal = func(io.Writer) bool { return false }
	a.heartbeat = 0
	a.now = func() time.Time { return fixedNow }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	if code := a.execute(ctx, []string{"run", "-j", "1", "--db", db, path}); code != exitInterrupted {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	const block = "\n\n# missing: 2 of 3 planned jobs have no result (interrupted: the run stopped before they started or measured anything)\n#   base: 4MiB, 16MiB\n"
	if !strings.HasSuffix(stdout.String(), block) {
		t.Errorf("run's tables do not end with the jobs it never ran:\n%s", stdout.String())
	}
	_, out, _ := storeApp(t, nil, "show", "1", "--db", db)
	if !strings.HasSuffix(out, block) {
		t.Errorf("show:\n%s", out)
	}
}
