package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"fabriclab/internal/safetext"
	"fabriclab/metrics"
	"fabriclab/queue"
	"fabriclab/report"
	"fabriclab/runner"
	"fabriclab/scenario"
	"fabriclab/store"
)

// Sweeps on many machines: `run --queue` (or `submit`) puts a run's jobs on
// the job queue in the results database (package queue), `worker` runs
// them, `cancel` stops a queued run, and `run --queue --wait` waits for
// the workers and prints what a local run prints.

func init() {
	moreCommands = append(moreCommands, (*app).submitCmd, (*app).workerCmd, (*app).cancelCmd)
}

// waitPoll is how often `run --queue --wait` looks for new rows.
var waitPoll = 250 * time.Millisecond

// checkQueueFlags refuses the run flags that do not go with --queue.
func checkQueueFlags(cmd *cobra.Command, f runFlags) error {
	switch {
	case f.wait && !f.queue:
		return usageErr(cmd, "--wait waits for the workers of --queue")
	case !f.queue:
		return nil
	case f.noStore:
		return usageErr(cmd, "--queue puts the jobs in the results database; drop --no-store")
	case f.engine != "":
		return usageErr(cmd, "--queue runs jobs on the workers' simulators; --engine %s runs here", f.engine)
	case cmd.Flags().Changed("parallel"):
		return usageErr(cmd, "with --queue each worker's --concurrency says how many jobs run at once, not -j")
	case !f.wait && (f.jsonPath != "" || f.csvPath != "" || f.report != ""):
		return usageErr(cmd, "--json, --csv and --report with --queue need --wait (or 'fabriclab export RUN' and 'fabriclab report RUN' once it is done)")
	}
	return nil
}

// dbDSN is the database of --db, or the default one.
func dbDSN(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return defaultDB()
}

// runQueued is `run --queue`: the run is saved as queued, its jobs go on
// the queue, and with --wait this waits for the workers.
func (a *app) runQueued(ctx context.Context, path string, p *plan, f runFlags) error {
	// What a build would refuse is refused here, as validate refuses it,
	// rather than in every worker's rows.
	if err := checkJobs(p); err != nil {
		return withPath(path, err)
	}
	dsn, err := dbDSN(f.db)
	if err != nil {
		return &exitErr{exitError, err.Error()}
	}
	// The jobs carry the scenario as loaded here: load it once more for
	// the bundle, and check that it expands as the plan did.
	file, err := scenario.LoadOptions(path, scenario.Options{Sets: f.sets, Sweeps: f.sweeps, MaxBytes: int64(a.maxScenario)})
	if err != nil {
		return withPath(path, err)
	}
	jobs := file.Jobs()
	if len(jobs) != len(p.Jobs) {
		return withPath(path, errors.New("the file changed while it was read; try again"))
	}
	for i := range jobs {
		if JobLabel(jobs[i]) != JobLabel(p.Jobs[i]) || jobs[i].VariantIndex != p.Jobs[i].VariantIndex || jobs[i].SizeIndex != p.Jobs[i].SizeIndex {
			return withPath(path, errors.New("the file changed while it was read; try again"))
		}
	}
	sub, err := queue.Plan(path, file, jobs, f.sets, f.sweeps, version)
	if err != nil {
		return &exitErr{exitError, err.Error()}
	}
	st, err := openDB(f.db, false)
	if err != nil {
		return &exitErr{exitError, err.Error()}
	}
	defer st.Close()
	q, err := queue.Open(ctx, dsn, st.Name(), a.stderr)
	if err != nil {
		return &exitErr{exitError, err.Error()}
	}
	defer q.Close()
	started := a.now()
	vs := make([]report.VariantResult, len(p.Variants))
	for i, v := range p.Variants {
		vs[i] = report.VariantResult{Name: v.Name, Collective: v.Collective, Parent: v.Parent, Sweep: v.Sweep}
	}
	id, err := st.BeginRun(store.Meta{
		Name: p.Name, ScenarioFile: p.Path, ScenarioText: string(p.Text), Seed: p.Seed,
		Sets: f.sets, Sweeps: f.sweeps, Version: version, Tags: dedupe(f.tags), Note: f.note,
		Started: started.UTC().Format(time.RFC3339), Expected: len(p.Jobs), Queue: queue.Name,
	}, vs)
	if err != nil {
		return &exitErr{exitError, err.Error()}
	}
	if err := q.Submit(ctx, id, sub); err != nil {
		_ = st.FinishRun(id, store.StatusFailed, a.now().UTC().Format(time.RFC3339))
		return &exitErr{exitError, err.Error()}
	}
	if !f.quiet {
		fmt.Fprintf(a.stderr, "fabriclab: queued as run %d: %s in %s; workers take them ('fabriclab worker --db …')\n",
			id, plural(len(p.Jobs), "job"), safetext.Terminal(st.Name()))
	}
	if !f.wait {
		return nil
	}
	return a.waitQueued(ctx, st, q, id, p, f, started)
}

// waitQueued waits for the rows of a queued run as the workers save them:
// a line per row on stderr (not with --quiet), each variant's tables on
// stdout as soon as its rows are all in (in variant order, so stdout is
// what a local run prints), then the outputs and exit code of a local
// run. It stops early when the run is cancelled, when every job has ended
// without all rows (River gave up on some: their errors are printed), or
// on Ctrl-C (the run goes on on the workers).
func (a *app) waitQueued(ctx context.Context, st *store.Store, q *queue.Queue, id int64, p *plan, f runFlags, started time.Time) error {
	processStop.jobPhase()
	index := map[store.ResultKey]int{}
	results := make([]JobResult, len(p.Jobs))
	need := make([]int, len(p.Variants))
	for i, j := range p.Jobs {
		index[store.ResultKey{Variant: j.VariantIndex, Size: j.SizeIndex}] = i
		results[i].Job = j
		need[j.VariantIndex]++
	}
	have := make([]int, len(p.Variants))
	got, next := 0, 0 // rows in, the next variant to print
	var streamed bytes.Buffer
	stream := func() error {
		for ; next < len(p.Variants) && have[next] == need[next]; next++ {
			out, _ := buildOutput(p, results, false)
			v := out.Variants[next]
			v.Sweep = nil // the sweep summary comes once, at the end
			var b bytes.Buffer
			if next > 0 {
				b.WriteString("\n")
			}
			if err := a.writeVariantTables(&b, p, f.format, v, next == 0); err != nil { // format.go
				return err
			}
			streamed.Write(b.Bytes())
			if _, err := a.stdout.Write(b.Bytes()); err != nil {
				return err
			}
		}
		return nil
	}
	quiet := f.quiet
	lastLine, lastCheck := a.now(), a.now()
	var reasons []string
	cancelled := false
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	readRows := func() error {
		keys, err := st.ResultKeys(id)
		if err != nil {
			return err
		}
		for _, k := range keys {
			i, ok := index[k]
			if !ok || results[i].Ran {
				continue
			}
			r, err := st.Result(id, k.Variant, k.Size)
			if err != nil {
				return err
			}
			jr := JobResult{Job: p.Jobs[i], Result: r, Ran: true, Elapsed: time.Duration(r.WallS * float64(time.Second))}
			if r.Error != "" {
				jr.Err = errors.New(r.Error)
			}
			results[i] = jr
			got++
			have[jr.Job.VariantIndex]++
			if !quiet {
				fmt.Fprintf(a.stderr, "[%d/%d] %s %s\n", got, len(p.Jobs), safetext.Terminal(JobLabel(jr.Job)), safetext.Terminal(runnerOutcome(jr)))
				lastLine = a.now()
			}
		}
		if printsTables(f) {
			return stream()
		}
		return nil
	}
wait:
	for got < len(p.Jobs) {
		if err := readRows(); err != nil {
			return &exitErr{exitError, fmt.Sprintf("run %d: %v (the run goes on on the workers; 'fabriclab show %d' once it is done)", id, oneLine(err.Error()), id)}
		}
		if got == len(p.Jobs) {
			break
		}
		if now := a.now(); now.Sub(lastCheck) >= 2*time.Second {
			lastCheck = now
			m, err := st.Meta(id)
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			if m.Status == store.StatusInterrupted {
				cancelled = true
				break
			}
			// Settle ends the run (failed) when River is done with its
			// jobs with rows missing, unless a worker did already.
			pr, _, err := q.Settle(ctx, st, id)
			if err != nil && ctx.Err() == nil {
				return &exitErr{exitError, err.Error()}
			}
			if err == nil && pr.Pending == 0 {
				// Every job has ended: read the rows once more (the
				// last may have landed since), and what is missing
				// never will.
				if err := readRows(); err != nil {
					return &exitErr{exitError, err.Error()}
				}
				if got < len(p.Jobs) {
					reasons = pr.Failed
				}
				break
			}
			if !quiet && a.heartbeat > 0 && now.Sub(lastLine) >= a.heartbeat {
				fmt.Fprintf(a.stderr, "[%d/%d] waiting for the workers: %s queued or running\n", got, len(p.Jobs), plural(pr.Pending, "job"))
				lastLine = now
			}
		}
		select {
		case <-ctx.Done():
			break wait
		case <-tick.C:
		}
	}
	processStop.outputPhase()
	interrupted := ctx.Err() != nil || cancelled
	tables := func(out report.Output) error {
		var full bytes.Buffer
		if err := a.writeRunTables(&full, p, f.format, out); err != nil { // format.go
			return err
		}
		rest := full.Bytes()
		if bytes.HasPrefix(rest, streamed.Bytes()) {
			rest = rest[streamed.Len():]
		} else if streamed.Len() > 0 {
			rest = append([]byte("\n"), rest...)
		}
		_, err := a.stdout.Write(rest)
		return err
	}
	err := a.finishRun(ctx, p, f, results, started, a.now(), interrupted, nil, tables)
	missing := len(p.Jobs) - got
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(a.stderr, "fabriclab: run %d goes on on the workers: 'fabriclab show %d' once it is done, 'fabriclab cancel %d' stops it\n", id, id, id)
	case cancelled:
		fmt.Fprintf(a.stderr, "fabriclab: run %d was cancelled with %d of %s saved\n", id, got, plural(len(p.Jobs), "row"))
		if err == nil {
			err = &exitErr{exitError, ""}
		}
	case missing > 0:
		msg := fmt.Sprintf("run %d: %d of %s never ran", id, missing, plural(len(p.Jobs), "job"))
		if m, err := st.Meta(id); err == nil && m.Status == store.StatusFailed {
			msg = fmt.Sprintf("run %d failed: %d of %s never ran", id, missing, plural(len(p.Jobs), "job"))
		}
		if len(reasons) > 0 {
			msg += ": " + strings.Join(dedupe(reasons), "; ")
		}
		fmt.Fprintf(a.stderr, "fabriclab: %s\n", safetext.Terminal(oneLine(msg)))
		if err == nil {
			err = &exitErr{exitError, ""}
		}
	case !f.quiet:
		fmt.Fprintf(a.stderr, "fabriclab: saved as run %d\n", id)
	}
	return err
}

// runnerOutcome says how a row's job ended, as a local run's progress
// lines do (its time is the job's wall time on its worker).
func runnerOutcome(jr JobResult) string {
	switch {
	case jr.Err != nil:
		return fmt.Sprintf("failed: %s", oneLine(jr.Err.Error()))
	case !jr.Result.Complete:
		return fmt.Sprintf("hit the simulated time limit after %s", jr.Elapsed.Round(time.Millisecond))
	}
	return fmt.Sprintf("done in %s", jr.Elapsed.Round(time.Millisecond))
}

func (a *app) submitCmd() *cobra.Command {
	cmd := a.runCmd()
	cmd.Use = "submit FILE"
	cmd.Short = "Put a scenario's jobs on the job queue for workers (run --queue)"
	cmd.Long = `submit is 'run --queue': it loads and checks a scenario as validate does
(a job whose build would fail, e.g. above sim.memory_limit or with a
sim.telemetry.flows id the workload does not have, refuses the whole
submission, before anything is queued; a switch.forwarding te or
sim.telemetry.flows job is built here once for that), saves
the run in the results database as queued and puts each of its jobs (variant ×
sweep point × size) on the job queue in that database, for any number of
'fabriclab worker' processes to run. A job carries the scenario text and every
file it reads, so workers need no shared filesystem. 'fabriclab runs' shows
how many rows are in; 'fabriclab show RUN' and 'fabriclab export RUN' read the
run; 'fabriclab cancel RUN' stops it. With --wait, submit waits for the
workers and prints what a local run prints.`
	cmd.Example = `  fabriclab submit --db postgres://lab@db.example/fabriclab sweep.yaml
  fabriclab submit --wait --json out.json sweep.yaml`
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageErr(cmd, "submit needs exactly one scenario file, got %d arguments", len(args))
		}
		return nil
	}
	_ = cmd.Flags().Set("queue", "true")
	_ = cmd.Flags().MarkHidden("queue")
	return cmd
}

func (a *app) workerCmd() *cobra.Command {
	var db string
	var concurrency int
	var timeout, poll time.Duration
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run queued jobs (run --queue) from the results database",
		Long: `worker takes jobs from the job queue in the results database, runs them
on the simulator and saves each result row into its run as it finishes, until
it is stopped. Run any number of workers on any number of machines against
the same PostgreSQL database (--db postgres://…), or several on one machine on
a SQLite file. A worker opens no port: it only connects to the database.

A job carries its scenario and the files it reads; the worker unpacks them in
a private temporary directory and reads nothing else of its own disk. A job
that runs longer than --job-timeout is stopped and retried (5 attempts in
all); a job whose worker died is run again by another worker a little after
--job-timeout from its start (River's rescuer, on the worker that leads,
looks every 30 s; a new leader takes over within 20 s of a dead one). Give
every worker the same --job-timeout, above your longest job. Every row lands
exactly once. A malformed job is refused (cancelled) with the reason. When
River has given up on a job (its 5th attempt failed) or a job was refused,
the run is marked failed with the rows it has, once its other jobs end.

Each job takes a core of the machine for each of its parts (sim.partitions,
one without) before it starts, and waits for them (within its timeout): a
worker never runs more parts at once than it has cores.

Ctrl-C or SIGTERM stops the worker: its running jobs are stopped and go back
to the queue for another worker; a second signal quits at once.`,
		Example: `  fabriclab worker --db postgres://lab@db.example/fabriclab --concurrency 8
  fabriclab worker            # on the default SQLite database, one job per CPU`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case cmd.Flags().Changed("concurrency") && concurrency < 1:
				return usageErr(cmd, "--concurrency must be at least 1, got %d (leave it out for one job per CPU)", concurrency)
			case concurrency == 0:
				concurrency = runtime.NumCPU()
			}
			if timeout <= 0 {
				return usageErr(cmd, "--job-timeout must be a positive duration, got %s", timeout)
			}
			if poll <= 0 {
				return usageErr(cmd, "--poll must be a positive duration, got %s", poll)
			}
			dsn, err := dbDSN(db)
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			// Short size-distribution names must resolve to the files the
			// job carries, not to a folder of this machine.
			os.Unsetenv(scenario.WorkloadsEnv)
			st, err := openDB(db, false)
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			defer st.Close()
			ctx := cmd.Context()
			q, err := queue.Open(ctx, dsn, st.Name(), a.stderr)
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			defer q.Close()
			processStop.jobPhase() // the first signal stops the worker cleanly
			err = q.Work(ctx, queue.WorkerConfig{
				Store: st, Run: a.runJob, Version: version, Concurrency: concurrency, Cores: runner.NewCores(runtime.NumCPU()), JobTimeout: timeout,
				PollInterval: poll, MaxScenario: int64(a.maxScenario), Log: a.stderr,
				Row: func(jr JobResult) metrics.SizeResult { res, _, _ := resultRow(jr, false); return res },
				Started: func(id string) {
					fmt.Fprintf(a.stderr, "fabriclab: worker %s on %s: up to %s at once\n", id, safetext.Terminal(st.Name()), plural(concurrency, "job"))
				},
			})
			processStop.outputPhase()
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			fmt.Fprintln(a.stderr, "fabriclab: worker stopped")
			return &exitErr{signalExitCode(ctx), ""}
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	cmd.Flags().IntVarP(&concurrency, "concurrency", "c", 0, "run up to `N` jobs at once, at least 1 (default: the number of CPUs); a job split into sim.partitions parts takes a core for each")
	cmd.Flags().DurationVar(&timeout, "job-timeout", time.Hour, "stop (and retry) a job that runs longer than `D`; a dead worker's job is run again elsewhere after about as long. Above your longest job, the same on every worker")
	cmd.Flags().DurationVar(&poll, "poll", time.Second, "look for new jobs every `D` when idle")
	_ = cmd.Flags().MarkHidden("poll")
	a.maxScenarioFlag(cmd)
	return cmd
}

func (a *app) cancelCmd() *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Stop a queued run (run --queue)",
		Long: `cancel marks a queued run interrupted and cancels its jobs that have not
finished: waiting ones never run, running ones are stopped by their workers.
The rows already saved are kept ('fabriclab show RUN').`,
		Example: `  fabriclab cancel 12`,
		Args:    runIDArg(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := store.ParseID(args[0])
			dsn, err := dbDSN(db)
			if err != nil {
				return &exitErr{exitError, err.Error()}
			}
			return withStore(db, func(st *store.Store) error {
				was, err := st.CancelQueued(id)
				if err != nil {
					return err
				}
				q, err := queue.Open(cmd.Context(), dsn, st.Name(), a.stderr)
				if err != nil {
					return err
				}
				defer q.Close()
				n, err := q.Cancel(cmd.Context(), id)
				if err != nil {
					return err
				}
				if !was {
					m, err := st.Meta(id)
					if err != nil {
						return err
					}
					if n == 0 {
						return fmt.Errorf("run %d is %s, not queued: nothing to cancel", id, forTerm(m.Status))
					}
				}
				fmt.Fprintf(a.stderr, "fabriclab: run %d cancelled: %s stopped\n", id, plural(n, "job"))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&db, "db", "", dbUsage)
	return cmd
}
