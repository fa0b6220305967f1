// Package runner runs a list of jobs on a pool of workers and reports their
// progress: the part of "fabriclab run" that a worker process or a web
// server calls too. Which engine runs a job is the caller's choice (the
// JobFunc: lab.Run for the packet engine, or engine.RunJob with another).
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"fabriclab/engine"
	"fabriclab/metrics"
	"fabriclab/scenario"
)

// JobFunc runs one job: engine.RunJob with an engine (lab.Run for the
// packet engine), or a fake in tests. Cancelling ctx must make it return
// soon with what it has (Complete=false).
type JobFunc func(ctx context.Context, job scenario.Job, progress engine.Progress) (metrics.SizeResult, error)

// JobResult is the outcome of one job, at the same index as the job in the
// slice given to RunAll.
type JobResult struct {
	Job     scenario.Job
	Result  metrics.SizeResult
	Err     error
	Ran     bool // false: never started because the run was cancelled first
	Stopped bool // the run was cancelled when the job returned
	Elapsed time.Duration
	Stack   string // set when the job panicked
}

// JobEvent is what a Reporter hears when a job ends.
type JobEvent struct {
	Index       int // index in the job list
	Done, Total int // jobs ended so far (this one included) and in all
	JobResult
}

// Reporter shows progress. The Runner serializes calls to its methods;
// frac may be called from any goroutine at any time while the job runs and
// returns its latest fraction (0..1).
type Reporter interface {
	Start(total, workers int)
	JobStart(index int, job scenario.Job, frac func() float64)
	JobDone(ev JobEvent)
	// Interrupted is called once, as soon as the run is cancelled, if it
	// is cancelled before the last job ends.
	Interrupted(running int)
	Finish(interrupted bool)
}

// Runner runs jobs on a pool of workers. Results do not depend on Parallel:
// each job is independent and deterministic, and results are returned by
// job index.
type Runner struct {
	Run      JobFunc
	Parallel int      // workers; <= 0 means 1
	Reporter Reporter // nil: no progress
	// Cores, if set, is a budget of cores the runner's jobs take from
	// before they start (see Cores); nil: none.
	Cores *Cores
	// Fatal, if set, says whether a job's error stops the run: no job
	// starts after it (they stay Ran == false), as if the run had been
	// cancelled, but jobs already running finish. For errors every later
	// job would meet too, such as an agent refusing the token.
	Fatal func(error) bool
}

// Cores is a budget of CPU cores that jobs share, across runners (a
// worker's jobs, a server's launches): a job takes a core for each of its
// parts (sim.partitions; one if it has none, at most the whole budget)
// before it starts, and gives them back when it ends. The parts of a
// partitioned job meet at every window by spinning, so two such jobs
// sharing cores would spend their time waiting on each other.
type Cores struct {
	n   int64
	sem *semaphore.Weighted
}

// NewCores is a budget of n cores (at least 1).
func NewCores(n int) *Cores {
	n = max(n, 1)
	return &Cores{n: int64(n), sem: semaphore.NewWeighted(int64(n))}
}

// Take waits for job's cores (or ctx) and returns what gives them back.
func (c *Cores) Take(ctx context.Context, job scenario.Job) (release func(), err error) {
	k := int64(1)
	if job.Spec != nil {
		k = min(max(int64(job.Spec.Sim.Partitions), 1), c.n)
	}
	if err := c.sem.Acquire(ctx, k); err != nil {
		return nil, err
	}
	return func() { c.sem.Release(k) }, nil
}

// DefaultParallel is how many of jobs to run at once when the user did
// not say: one per CPU, or for jobs split into sim.partitions parts (each
// part on a core of its own) as many as the CPUs hold whole.
func DefaultParallel(jobs []scenario.Job) int {
	parts := 1
	for _, j := range jobs {
		if j.Spec != nil {
			parts = max(parts, j.Spec.Sim.Partitions)
		}
	}
	return max(1, runtime.NumCPU()/parts)
}

// RunAll runs jobs and returns one JobResult per job, in job order. Jobs
// start in StartOrder. When ctx is cancelled no new job starts; running
// jobs see the cancelled ctx and their (partial) results are kept.
func (r *Runner) RunAll(ctx context.Context, jobs []scenario.Job) []JobResult {
	results := make([]JobResult, len(jobs))
	for i, j := range jobs {
		results[i].Job = j
	}
	workers := max(r.Parallel, 1)
	workers = min(workers, max(len(jobs), 1))
	rep := r.Reporter
	var mu sync.Mutex // serializes reporter calls and guards the counters
	done, running, finished, notified := 0, 0, false, false
	// notify tells the reporter about a cancellation, once, before any
	// job that it stopped is reported. Call with mu held.
	notify := func() {
		if rep != nil && !notified && !finished && done < len(jobs) && ctx.Err() != nil {
			notified = true
			rep.Interrupted(running)
		}
	}
	if rep != nil {
		rep.Start(len(jobs), workers)
		stopWatch := context.AfterFunc(ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			notify()
		})
		defer stopWatch()
	}

	// starting ends with ctx or at a fatal error (Fatal): no job starts
	// after; the jobs that run keep ctx, so a fatal error stops none.
	starting, halt := context.WithCancel(ctx)
	defer halt()
	next := make(chan int)
	go func() {
		defer close(next)
		for _, i := range StartOrder(jobs, workers) {
			if starting.Err() != nil {
				return
			}
			select {
			case next <- i:
			case <-starting.Done():
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if starting.Err() != nil {
					continue // drain; the feeder stops soon
				}
				release := func() {}
				if r.Cores != nil {
					var err error
					if release, err = r.Cores.Take(starting, jobs[i]); err != nil {
						continue // cancelled while it waited: never started
					}
					if starting.Err() != nil { // it ended as the cores came
						release()
						continue
					}
				}
				var frac atomic.Uint64 // float64 bits
				mu.Lock()
				running++
				if rep != nil {
					rep.JobStart(i, jobs[i], func() float64 { return math.Float64frombits(frac.Load()) })
				}
				mu.Unlock()
				progress := func(f float64) {
					if f < 0 || math.IsNaN(f) {
						f = 0
					}
					frac.Store(math.Float64bits(min(f, 1)))
				}
				res := runOne(ctx, r.Run, jobs[i], progress)
				release()
				results[i] = res
				if res.Err != nil && r.Fatal != nil && r.Fatal(res.Err) {
					halt()
				}
				mu.Lock()
				notify()
				done++
				running--
				if rep != nil {
					rep.JobDone(JobEvent{Index: i, Done: done, Total: len(jobs), JobResult: res})
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	finished = true
	mu.Unlock()
	if rep != nil {
		rep.Finish(ctx.Err() != nil)
	}
	return results
}

// StartOrder is the order jobs start in on the given number of workers.
// One worker keeps job order: the order cannot change how long the run
// takes, and rows then finish as the file lists them. Several workers take
// the largest data size first (ties in job order): a size sweep's work
// roughly doubles with each size, and a sweep started in order leaves its
// largest job running alone at the end (the main job on 2 cores: 61 s in
// order, 57 s largest first; sum of the jobs 114 CPU-s).
func StartOrder(jobs []scenario.Job, workers int) []int {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	if workers > 1 {
		sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].Size > jobs[order[b]].Size })
	}
	return order
}

// runOne runs one job, turning a panic into an error so that one bad job
// does not lose the results of the others.
func runOne(ctx context.Context, run JobFunc, job scenario.Job, progress engine.Progress) (jr JobResult) {
	jr.Job = job
	jr.Ran = true
	start := time.Now()
	defer func() {
		jr.Elapsed = time.Since(start)
		if p := recover(); p != nil {
			jr.Err = fmt.Errorf("panic: %v", p)
			jr.Stack = string(debug.Stack())
			if s, ok := p.(interface{ PanicStack() []byte }); ok {
				// Raised again from another goroutine (a part of a
				// partitioned run): where it began.
				jr.Stack = string(s.PanicStack())
			}
		}
	}()
	defer func() { jr.Stopped = ctx.Err() != nil }()
	jr.Result, jr.Err = run(ctx, job, progress)
	return jr
}

// JobLabel names a job in progress lines: "variant size".
func JobLabel(j scenario.Job) string {
	return fmt.Sprintf("%s %s", j.Variant, j.Size)
}

// Outcome says how a finished job ended, for progress lines: "done in
// 1.2s", "stopped after …", "failed after …: why", "hit the simulated time
// limit after …".
func Outcome(r JobResult) string {
	switch {
	case Canceled(r.Err):
		return fmt.Sprintf("stopped after %s", fmtDur(r.Elapsed))
	case r.Err != nil:
		return fmt.Sprintf("failed after %s: %s", fmtDur(r.Elapsed), oneLine(r.Err.Error()))
	case !r.Result.Complete && r.Stopped:
		return fmt.Sprintf("stopped after %s", fmtDur(r.Elapsed))
	case !r.Result.Complete:
		return fmt.Sprintf("hit the simulated time limit after %s", fmtDur(r.Elapsed))
	}
	return fmt.Sprintf("done in %s", fmtDur(r.Elapsed))
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// LineReporter prints one line per finished job and, while jobs run, a
// heartbeat line when nothing was printed for its heartbeat interval. It
// suits logs and pipes (stderr not a terminal).
type LineReporter struct {
	w         io.Writer
	heartbeat time.Duration
	now       func() time.Time

	mu      sync.Mutex // guards the fields below and writes to w
	total   int
	done    int
	last    time.Time
	start   time.Time
	running map[int]runningJob
	stop    chan struct{}
	stopped chan struct{}
}

type runningJob struct {
	job  scenario.Job
	frac func() float64
}

// NewLineReporter writes lines to w, with a heartbeat every heartbeat
// while jobs run (0: none).
func NewLineReporter(w io.Writer, heartbeat time.Duration) *LineReporter {
	return &LineReporter{w: w, heartbeat: heartbeat, now: time.Now}
}

func (l *LineReporter) Start(total, workers int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total = total
	l.start = l.now()
	l.last = l.start
	l.running = map[int]runningJob{}
	fmt.Fprintf(l.w, "running %s on %s\n", plural(total, "job"), plural(workers, "worker"))
	if l.heartbeat > 0 {
		l.stop, l.stopped = make(chan struct{}), make(chan struct{})
		go l.beat()
	}
}

func (l *LineReporter) beat() {
	defer close(l.stopped)
	t := time.NewTicker(l.heartbeat / 4)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			if now := l.now(); now.Sub(l.last) >= l.heartbeat && len(l.running) > 0 {
				fmt.Fprintf(l.w, "[%d/%d] %s elapsed, running: %s\n", l.done, l.total,
					fmtDur(now.Sub(l.start)), l.runningList())
				l.last = now
			}
			l.mu.Unlock()
		}
	}
}

// runningList describes the running jobs, in job order, at most 4.
func (l *LineReporter) runningList() string {
	idx := make([]int, 0, len(l.running))
	for i := range l.running {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var parts []string
	for n, i := range idx {
		if n == 4 {
			parts = append(parts, fmt.Sprintf("+%d more", len(idx)-n))
			break
		}
		r := l.running[i]
		parts = append(parts, fmt.Sprintf("%s %.0f%%", JobLabel(r.job), 100*r.frac()))
	}
	return strings.Join(parts, ", ")
}

func (l *LineReporter) JobStart(index int, job scenario.Job, frac func() float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[index] = runningJob{job, frac}
}

func (l *LineReporter) JobDone(ev JobEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.running, ev.Index)
	l.done = ev.Done
	l.last = l.now()
	fmt.Fprintf(l.w, "[%d/%d] %s %s\n", ev.Done, ev.Total, JobLabel(ev.Job), Outcome(ev.JobResult))
}

func (l *LineReporter) Interrupted(running int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, interruptNotice(running))
	l.last = l.now()
}

// interruptNotice is what a reporter prints when the run is cancelled.
func interruptNotice(running int) string {
	return fmt.Sprintf("interrupted: stopping %s, keeping what finished (Ctrl-C again to quit at once)", plural(running, "running job"))
}

func (l *LineReporter) Finish(interrupted bool) {
	if l.stop != nil {
		close(l.stop)
		<-l.stopped
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if interrupted {
		fmt.Fprintf(l.w, "interrupted: %d of %d jobs ran\n", l.done, l.total)
	}
}

// Canceled reports whether err is only the cancellation of the run.
func Canceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	return fmt.Sprintf("%d %ss", n, s)
}
