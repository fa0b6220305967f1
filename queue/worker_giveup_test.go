package queue

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fabriclab/engine"
	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/runner"
	"fabriclab/scenario"
	"fabriclab/store"
	"fabriclab/store/pgtest"
)

const giveUpScenario = `name: giveup
topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}
workload: {kind: alltoall, ranks: 8, sizes: {list: [64KiB, 1MiB]}}
`

// lockedBuffer is a log that a worker writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// giveUpRig is a results database with the two-job run 1 queued.
type giveUpRig struct {
	st  *store.Store
	q   *Queue
	log *lockedBuffer
	dsn string
}

func newGiveUpRig(t *testing.T, dsn string) *giveUpRig {
	t.Helper()
	dir := t.TempDir()
	if dsn == "" {
		dsn = filepath.Join(dir, "q.db")
	}
	path := filepath.Join(dir, "giveup.yaml")
	if err := os.WriteFile(path, []byte(giveUpScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := &lockedBuffer{}
	q, err := Open(context.Background(), dsn, st.Name(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	f, err := scenario.LoadOptions(path, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := f.Jobs()
	sub, err := Plan(path, f, jobs, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.BeginRun(store.Meta{Name: "giveup", ScenarioFile: path, Started: time.Now().UTC().Format(time.RFC3339),
		Expected: len(jobs), Queue: Name}, []report.VariantResult{{Name: jobs[0].Variant, Collective: "alltoall"}})
	if err != nil || id != 1 {
		t.Fatalf("begin run: %d, %v", id, err)
	}
	if err := q.Submit(context.Background(), id, sub); err != nil {
		t.Fatal(err)
	}
	return &giveUpRig{st: st, q: q, log: log, dsn: dsn}
}

// work runs a worker with run as its job function until the test ends.
func (r *giveUpRig) work(t *testing.T, run runner.JobFunc, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.q.Work(ctx, WorkerConfig{Store: r.st, Run: run, Version: "test", Concurrency: 2, JobTimeout: timeout,
			PollInterval: 50 * time.Millisecond, Log: r.log,
			Row: func(jr runner.JobResult) metrics.SizeResult { return jr.Result }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
		if t.Failed() {
			t.Logf("worker log:\n%s", r.log.String())
		}
	})
}

// waitStatus waits for run 1 to have status want.
func (r *giveUpRig) waitStatus(t *testing.T, want string, within time.Duration) store.Meta {
	t.Helper()
	var m store.Meta
	for end := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if m, err = r.st.Meta(1); err != nil {
			t.Fatal(err)
		}
		if m.Status == want {
			return m
		}
		if time.Now().After(end) {
			t.Fatalf("run 1 is %s (%d of %d rows) after %s, want %s", m.Status, m.Rows, m.Expected, within, want)
		}
	}
}

// slowSecond finishes the smaller job at once and runs the larger one
// until it is stopped.
func slowSecond(ctx context.Context, j scenario.Job, _ engine.Progress) (metrics.SizeResult, error) {
	r := metrics.SizeResult{Completion: metrics.Completion{SizeBytes: int64(j.Size), Ranks: 8}, Outcome: metrics.Outcome{Complete: true}}
	if j.SizeIndex == 0 {
		return r, nil
	}
	<-ctx.Done()
	r.Complete = false
	return r, nil
}

func shortRetries(t *testing.T) {
	old := retryBase
	retryBase = 10 * time.Millisecond
	t.Cleanup(func() { retryBase = old })
}

// TestWorkerFailsARunRiverGaveUpOn: a job that outlives its timeout on
// every attempt is discarded by River; the worker that ends the run's
// last job marks the run failed with the rows it has (it stayed queued
// for ever), and says so.
func TestWorkerFailsARunRiverGaveUpOn(t *testing.T) {
	shortRetries(t)
	for name, dsn := range map[string]func(*testing.T) string{
		"sqlite":   func(*testing.T) string { return "" },
		"postgres": func(t *testing.T) string { return pgtest.Database(t) },
	} {
		t.Run(name, func(t *testing.T) {
			r := newGiveUpRig(t, dsn(t))
			r.work(t, slowSecond, 150*time.Millisecond)
			m := r.waitStatus(t, store.StatusFailed, 60*time.Second)
			if m.Rows != 1 || m.Missing() != 1 {
				t.Errorf("run 1: %d rows, %d missing; want 1 and 1", m.Rows, m.Missing())
			}
			// What a worker's sweep finds (on either driver).
			if runs, err := r.q.discardedRuns(context.Background(), time.Now().Add(-time.Hour), 10); err != nil || len(runs) != 1 || runs[0] != 1 {
				t.Errorf("discarded runs: %v, %v; want [1]", runs, err)
			}
			if runs, err := r.q.discardedRuns(context.Background(), time.Now().Add(time.Hour), 10); err != nil || len(runs) != 0 {
				t.Errorf("discarded runs since an hour from now: %v, %v; want none", runs, err)
			}
			log := r.log.String()
			for _, bad := range []string{"could not tell", "listing discarded jobs"} {
				if strings.Contains(log, bad) {
					t.Errorf("the worker's log says %q:\n%s", bad, log)
				}
			}
			for _, want := range []string{"that was its last attempt (5 of 5): River gives up on it",
				"fabriclab: worker: run 1 failed: River finished with its jobs and rows are missing: run 1: base 1MiB: stopped: it ran longer than the job timeout"} {
				if !strings.Contains(log, want) {
					t.Errorf("the worker's log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}

// TestWorkerSettlesRunsTheRescuerDiscarded: a job River discarded with no
// worker ending it (its worker died on its last attempt and the rescuer
// gave up) is found by the next worker, which fails its run.
func TestWorkerSettlesRunsTheRescuerDiscarded(t *testing.T) {
	r := newGiveUpRig(t, "")
	// The smaller job saved its row and completed; the larger one was
	// discarded by the rescuer.
	if _, _, err := r.st.AddQueuedResult(1, 0, 0, metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 64 << 10}}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", r.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UTC().Format("2006-01-02 15:04:05.000")
	for _, q := range []string{
		`UPDATE river_job SET state = 'completed', attempt = 1, finalized_at = '` + now + `' WHERE json_extract(args, '$.size') = 0`,
		`UPDATE river_job SET state = 'discarded', attempt = 5, finalized_at = '` + now + `',
			errors = jsonb('[{"at":"2026-01-01T00:00:00Z","attempt":5,"error":"rescued: stuck past the job timeout","trace":""}]')
			WHERE json_extract(args, '$.size') = 1`,
	} {
		if res, err := db.Exec(q); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%d jobs updated by %s", n, q)
		}
	}
	db.Close()
	r.work(t, slowSecond, time.Minute)
	r.waitStatus(t, store.StatusFailed, 30*time.Second)
	if log := r.log.String(); !strings.Contains(log, "run 1 failed: River finished with its jobs and rows are missing: rescued: stuck past the job timeout") {
		t.Errorf("the worker's log:\n%s", log)
	}
}

// TestWorkerSaysAJobWasCancelled: a job cancelled while it runs
// (`fabriclab cancel`) is logged as cancelled, not as the worker
// stopping, and River's own warning about it does not appear as a raw
// slog line.
func TestWorkerSaysAJobWasCancelled(t *testing.T) {
	r := newGiveUpRig(t, "")
	started := make(chan struct{}, 2)
	run := func(ctx context.Context, j scenario.Job, p engine.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex == 1 {
			started <- struct{}{}
		}
		return slowSecond(ctx, j, p)
	}
	r.work(t, run, time.Minute)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not start")
	}
	if _, err := r.st.CancelQueued(1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.q.Cancel(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); !strings.Contains(r.log.String(), "base 1MiB: stopped"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the cancelled job did not stop:\n%s", r.log.String())
		}
	}
	time.Sleep(200 * time.Millisecond) // River's lines, if any
	log := r.log.String()
	if !strings.Contains(log, "base 1MiB: stopped after") || !strings.Contains(log, "the job was cancelled") {
		t.Errorf("the log does not say the job was cancelled:\n%s", log)
	}
	for _, bad := range []string{"the worker is stopping", "level=WARN", "msg="} {
		if strings.Contains(log, bad) {
			t.Errorf("the log says %q:\n%s", bad, log)
		}
	}
	if m, err := r.st.Meta(1); err != nil || m.Status != store.StatusInterrupted {
		t.Errorf("run 1: %+v, %v; want interrupted", m.Status, err)
	}
}

// River's warnings are lines of the worker's format.
func TestRiverLoggerLines(t *testing.T) {
	var b bytes.Buffer
	l := riverLogger(&b, "fabriclab: worker: ", nil)
	l.Info("jobexecutor.JobExecutor: Job errored", "job_id", 1)
	l.Warn("jobexecutor.JobExecutor: job cancelled remotely", slog.Int64("job_id", 1))
	l.With("client_id", "w1").WarnContext(context.Background(), "elector: Current leader stepping down", slog.Duration("after", time.Second))
	l.Error("producer.Producer: Error fetching jobs", "error", "database is locked\nretrying")
	want := "fabriclab: worker: River: current leader stepping down (client_id=w1, after=1s)\n" +
		"fabriclab: worker: River error: error fetching jobs (error=database is locked retrying)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
