package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"fabriclab/metrics"
	"fabriclab/runner"
	"fabriclab/scenario"
	"fabriclab/store"
)

// WorkerConfig is what a worker needs besides the queue.
type WorkerConfig struct {
	Store *store.Store                              // the results database the queue is in
	Run   runner.JobFunc                            // runs a job: what the local run uses for the scenario's engine
	Row   func(runner.JobResult) metrics.SizeResult // the row a finished job saves, as a local run saves it
	// Version is this fabriclab's; a job expanded by another version is
	// left to a worker of that version (results are only equal between
	// equal builds).
	Version     string
	Concurrency int // jobs at once (≤ 0: 1)
	// Cores, if set, is the cores the jobs share: a job takes one for
	// each of its parts (sim.partitions) before it starts (runner.Cores),
	// so a worker never runs more parts at once than it has cores.
	Cores *runner.Cores
	// JobTimeout stops a job that runs longer (River retries it); a job
	// whose worker died is run again once it has been running for
	// RescueAfter(JobTimeout). 0: an hour.
	JobTimeout time.Duration
	// PollInterval is how often an idle worker looks for jobs (0: 1 s).
	PollInterval time.Duration
	MaxScenario  int64     // the largest scenario text accepted (0: scenario.DefaultMaxBytes)
	Log          io.Writer // one line per job started and ended, and River's warnings
	// Started, if set, is called with the worker's River client id once
	// it runs.
	Started func(id string)
}

// Work runs jobs from the queue until ctx is cancelled, then stops: running
// jobs are cancelled (River retries them, on this worker or another) and
// Work returns once they have returned.
func (q *Queue) Work(ctx context.Context, cfg WorkerConfig) error {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = time.Hour
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	w := &worker{cfg: cfg, q: q}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely[Args](workers, w); err != nil {
		return err
	}
	c, err := q.newClient(&river.Config{
		Logger:  riverLogger(cfg.Log, "fabriclab: worker: ", &w.mu),
		Queues:  map[string]river.QueueConfig{Name: {MaxWorkers: cfg.Concurrency}},
		Workers: workers,
		// River rescues only a job past its timeout: without one, a job
		// whose worker died would stay running for ever.
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: RescueAfter(cfg.JobTimeout),
		RetryPolicy:          retryPolicy{},
		MaxAttempts:          MaxAttempts,
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        min(100*time.Millisecond, cfg.PollInterval),
	})
	if err != nil {
		return fmt.Errorf("queue: %s", oneLine(err.Error()))
	}
	// The jobs this worker ends: the last of a run River gave up on ends
	// the run (Settle).
	events, unsubscribe := c.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer unsubscribe()
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("queue: starting the worker on %s: %s", q.name, oneLine(err.Error()))
	}
	if cfg.Started != nil {
		cfg.Started(c.ID())
	}
	settling := make(chan struct{})
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		w.settleLoop(events, settling)
	}()
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.StopAndCancel(stop)
	close(settling)
	<-settled
	if err != nil {
		return fmt.Errorf("queue: stopping the worker: %s", oneLine(err.Error()))
	}
	return nil
}

// How often a worker looks for runs whose jobs River's rescuer discarded
// (no worker ended them), and how far back it looks when it starts
// (River keeps discarded jobs a week).
var (
	sweepEvery = time.Minute
	sweepFirst = 7 * 24 * time.Hour
)

// settleLoop settles the run of every job this worker ends (completed,
// discarded or cancelled) and, every sweepEvery, the runs of jobs River
// discarded since the last look, until stop is closed.
func (w *worker) settleLoop(events <-chan *river.Event, stop <-chan struct{}) {
	since := time.Now().Add(-sweepFirst)
	sweep := func() {
		// River's clock and this one may differ a little: look back a
		// minute more (settling a run twice does nothing).
		next := time.Now().Add(-time.Minute)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		runs, err := w.q.discardedRuns(ctx, since, 500)
		cancel()
		if err != nil {
			w.logf("fabriclab: worker: %v", err)
			return
		}
		for _, run := range runs {
			w.settle(run)
		}
		since = next
	}
	sweep()
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			sweep()
		case ev, ok := <-events:
			if !ok {
				return
			}
			if ev.Job == nil || ev.Kind == river.EventKindJobFailed && ev.Job.State != rivertype.JobStateDiscarded {
				continue // River retries it
			}
			if run, ok := runOf(ev.Job); ok {
				w.settle(run)
			}
		}
	}
}

// settle ends run if River is done with its jobs with rows missing.
func (w *worker) settle(run int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, failed, err := w.q.Settle(ctx, w.cfg.Store, run)
	switch {
	case err != nil:
		w.logf("fabriclab: worker: run %d: could not tell whether River is done with it: %s", run, oneLine(err.Error()))
	case failed:
		w.logf("fabriclab: worker: %s", SettledMessage(run, pr))
	}
}

// RescueAfter is how long after it started a job whose worker died is run
// again, for a job timeout: a little past the timeout, so that a live
// worker stops the job first.
func RescueAfter(timeout time.Duration) time.Duration {
	return timeout + max(time.Second, timeout/60)
}

type worker struct {
	river.WorkerDefaults[Args]
	cfg WorkerConfig
	q   *Queue
	mu  sync.Mutex // serializes log lines
}

func (w *worker) logf(format string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.cfg.Log, format+"\n", a...)
}

// Work runs one job. A job that cannot be run as it is — arguments that
// do not decode, a bundle that does not unpack, a scenario that does not
// load, a run that was deleted or cancelled — is cancelled with the
// reason (River keeps it with the job, `run --wait` prints it) rather
// than retried; a failure that may pass (the database, a stop) is
// returned for River to retry.
func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	a := job.Args
	refuse := func(format string, args ...any) error {
		err := fmt.Errorf("job %d: %s", job.ID, fmt.Sprintf(format, args...))
		w.logf("fabriclab: worker: refused %v", err)
		return river.JobCancel(err)
	}
	if a.bad != "" {
		return refuse("malformed: %s", a.bad)
	}
	where := fmt.Sprintf("run %d: %s", a.Run, a.Label)
	if a.Version != w.cfg.Version {
		err := fmt.Errorf("%s: the job was queued by fabriclab %s, this worker is %s: left to a worker of that version", where, a.Version, w.cfg.Version)
		w.logf("fabriclab: worker: %v", err)
		return err
	}
	m, err := w.cfg.Store.Meta(a.Run)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return refuse("run %d is not in the database (deleted?)", a.Run)
	case err != nil:
		return err
	case m.Status == store.StatusInterrupted:
		return refuse("run %d was cancelled", a.Run)
	case a.Variant >= m.Variants || a.Size >= max(m.Expected, 1):
		return refuse("run %d has no variant %d size %d", a.Run, a.Variant, a.Size)
	}
	if has, err := w.cfg.Store.HasResult(a.Run, a.Variant, a.Size); err != nil {
		return err
	} else if has {
		w.logf("%s: already saved (attempt %d), nothing to do", where, job.Attempt)
		return nil
	}
	jr, release, err := w.run(ctx, a, func() { w.logf("%s: started (job %d, attempt %d)", where, job.ID, job.Attempt) })
	defer release() // its cores, once its row is saved and its line written
	if err != nil {
		return refuse("%s: %v", where, err)
	}
	if jr.Stopped || !jr.Ran {
		why := "the worker is stopping"
		switch timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded); {
		case errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely):
			// fabriclab cancel, or the launch page's Cancel: River
			// keeps the job cancelled, it is not retried.
			why = "the job was cancelled ('fabriclab cancel', or Cancel on its launch page): it is not retried"
			if !jr.Ran {
				why = "while it waited for cores, " + why
			}
			w.logf("%s: stopped after %s: %s", where, jr.Elapsed.Round(time.Millisecond), why)
			return river.JobCancel(fmt.Errorf("%s: stopped: %s", where, why))
		case timedOut && !jr.Ran:
			why = fmt.Sprintf("it waited for cores (one per part of sim.partitions) longer than the job timeout of %s: give the worker a --concurrency of its CPUs ÷ the partitions, or a longer --job-timeout", w.cfg.JobTimeout)
		case timedOut:
			why = fmt.Sprintf("it ran longer than the job timeout of %s (fabriclab worker --job-timeout)", w.cfg.JobTimeout)
		case !jr.Ran:
			why += " (it was waiting for cores)"
		}
		line := fmt.Sprintf("%s: stopped after %s: %s", where, jr.Elapsed.Round(time.Millisecond), why)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && job.Attempt >= job.MaxAttempts {
			line += fmt.Sprintf("; that was its last attempt (%d of %d): River gives up on it", job.Attempt, job.MaxAttempts)
		}
		w.logf("%s", line)
		return fmt.Errorf("%s: stopped: %s", where, why)
	}
	saved, ended, err := w.cfg.Store.AddQueuedResult(a.Run, a.Variant, a.Size, w.cfg.Row(jr))
	if err != nil {
		w.logf("fabriclab: worker: %s: %v", where, err)
		return err
	}
	msg := runner.Outcome(jr)
	switch {
	case !saved:
		msg += ", already saved by another worker"
	case ended:
		msg += fmt.Sprintf(", saved; run %d complete", a.Run)
	default:
		msg += ", saved"
	}
	w.logf("%s: %s", where, msg)
	return nil
}

// run unpacks the job's bundle into a directory of its own, loads the
// scenario from there, finds the job, takes its cores and runs it
// (started is called once it has them); release gives the cores back. A
// job stopped while it waited for cores did not run (Ran false).
func (w *worker) run(ctx context.Context, a Args, started func()) (jr runner.JobResult, release func(), err error) {
	release = func() {}
	dir, err := os.MkdirTemp("", "fabriclab-job-")
	if err != nil {
		return jr, release, err
	}
	defer os.RemoveAll(dir)
	job, err := load(dir, a, w.cfg.MaxScenario)
	if err != nil {
		return jr, release, err
	}
	if w.cfg.Cores != nil {
		if release, err = w.cfg.Cores.Take(ctx, job); err != nil {
			return runner.JobResult{Job: job}, func() {}, nil
		}
	}
	started()
	r := &runner.Runner{Run: w.cfg.Run, Parallel: 1}
	return r.RunAll(ctx, []scenario.Job{job})[0], release, nil
}

// load unpacks a's bundle under dir and loads its job from there, as the
// submitter loaded it. Messages name the scenario as the submitter did.
func load(dir string, a Args, maxScenario int64) (scenario.Job, error) {
	files, err := unpack(dir, a.Bundle, a.Digest)
	if err != nil {
		return scenario.Job{}, err
	}
	if !files[a.Scenario] {
		return scenario.Job{}, fmt.Errorf("the bundle does not hold its scenario %s", a.Scenario)
	}
	name := filepath.Join(dir, filepath.FromSlash(a.Scenario))
	text, err := os.ReadFile(name)
	if err != nil {
		return scenario.Job{}, err
	}
	tidy := func(err error) error {
		msg := strings.ReplaceAll(err.Error(), name, a.Path)
		return errors.New(strings.ReplaceAll(msg, dir+string(filepath.Separator), ""))
	}
	// The run was read and saved by the process that queued it (SavedRun:
	// as it read it then).
	f, err := scenario.ParseOptions(name, text, scenario.Options{Sets: a.Sets, Sweeps: a.Sweeps, MaxBytes: maxScenario, SavedRun: true})
	if err != nil {
		return scenario.Job{}, tidy(err)
	}
	if err := checkCarried(f, dir, files); err != nil {
		return scenario.Job{}, tidy(err)
	}
	for _, j := range f.Jobs() {
		if j.VariantIndex != a.Variant || j.SizeIndex != a.Size {
			continue
		}
		if jobLabel(j) != a.Label || int64(j.Size) != a.Bytes {
			return scenario.Job{}, fmt.Errorf("the scenario expands variant %d size %d into %q (%d bytes), not %q (%d bytes) as when it was queued",
				a.Variant, a.Size, jobLabel(j), int64(j.Size), a.Label, a.Bytes)
		}
		return j, nil
	}
	return scenario.Job{}, fmt.Errorf("the scenario has no job of variant %d size %d", a.Variant, a.Size)
}
