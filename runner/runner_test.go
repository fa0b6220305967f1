package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fabriclab/engine"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/units"
)

func jobs(n int) []scenario.Job {
	js := make([]scenario.Job, n)
	for i := range js {
		js[i] = scenario.Job{Variant: "v", Size: units.Size(i + 1), SizeIndex: i}
	}
	return js
}

// Results come back in job order whatever order the workers finish in; a
// panicking job is a failed result with its stack, not a lost run.
func TestRunnerOrderAndPanics(t *testing.T) {
	run := func(_ context.Context, j scenario.Job, p engine.Progress) (metrics.SizeResult, error) {
		if j.SizeIndex == 2 {
			panic("boom")
		}
		time.Sleep(time.Duration(5-j.SizeIndex) * time.Millisecond) // later jobs finish first
		p(1)
		var r metrics.SizeResult
		r.SizeBytes, r.Complete = int64(j.Size), true
		return r, nil
	}
	var log bytes.Buffer
	r := &Runner{Run: run, Parallel: 3, Reporter: NewLineReporter(&log, 0)}
	res := r.RunAll(context.Background(), jobs(5))
	for i, jr := range res {
		switch {
		case !jr.Ran || jr.Job.SizeIndex != i:
			t.Fatalf("result %d: %+v", i, jr)
		case i == 2 && (jr.Err == nil || !strings.Contains(jr.Err.Error(), "boom") || jr.Stack == ""):
			t.Errorf("the panic: err %v, stack %q", jr.Err, jr.Stack)
		case i != 2 && (jr.Err != nil || jr.Result.SizeBytes != int64(i+1)):
			t.Errorf("job %d: %+v", i, jr)
		}
	}
	if out := log.String(); !strings.Contains(out, "running 5 jobs on 3 workers") || !strings.Contains(out, "[5/5]") ||
		!strings.Contains(out, "v 3B failed after") {
		t.Errorf("progress lines:\n%s", out)
	}
}

// A panic raised again from another goroutine (a part of a partitioned
// run) reports the stack where it began.
func TestRunnerReportsTheStackWhereAPanicBegan(t *testing.T) {
	run := func(context.Context, scenario.Job, engine.Progress) (metrics.SizeResult, error) {
		panic(stackedPanic{})
	}
	res := (&Runner{Run: run, Parallel: 1, Reporter: NewLineReporter(&bytes.Buffer{}, 0)}).RunAll(context.Background(), jobs(1))
	if jr := res[0]; jr.Err == nil || !strings.Contains(jr.Err.Error(), "in part 1") || jr.Stack != "part 1's stack" {
		t.Errorf("err %v, stack %q", jr.Err, jr.Stack)
	}
}

type stackedPanic struct{}

func (stackedPanic) String() string     { return "in part 1" }
func (stackedPanic) PanicStack() []byte { return []byte("part 1's stack") }

// Cancelled before it starts, nothing runs; the results say so.
func TestRunnerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := 0
	r := &Runner{Run: func(context.Context, scenario.Job, engine.Progress) (metrics.SizeResult, error) {
		ran++
		return metrics.SizeResult{}, nil
	}}
	for _, jr := range r.RunAll(ctx, jobs(3)) {
		if jr.Ran {
			t.Errorf("job %d ran", jr.Job.SizeIndex)
		}
	}
	if ran != 0 {
		t.Errorf("%d jobs ran", ran)
	}
}

// A fatal error (Fatal) stops the run: no job starts after it, on one
// worker or on several; jobs already running finish; other errors do not
// stop it.
func TestRunnerStopsAtAFatalError(t *testing.T) {
	errFatal := errors.New("wrong token")
	for _, workers := range []int{1, 3} {
		var mu sync.Mutex
		started := 0
		// With three workers the jobs start largest (last) first: 7 fails
		// fatally, and 6 and 5, if they started, wait for that to be
		// reported (the runner has stopped by then), so that neither ends
		// and takes another job before the runner stops.
		reported := make(chan struct{})
		run := func(_ context.Context, j scenario.Job, _ engine.Progress) (metrics.SizeResult, error) {
			mu.Lock()
			started++
			mu.Unlock()
			switch {
			case j.SizeIndex == 1:
				return metrics.SizeResult{}, errors.New("one bad job")
			case workers == 1 && j.SizeIndex == 3, workers > 1 && j.SizeIndex == 7:
				return metrics.SizeResult{}, fmt.Errorf("agent a: %w", errFatal)
			case workers > 1:
				<-reported
			}
			return metrics.SizeResult{}, nil
		}
		rep := &fatalReporter{fatal: errFatal, reported: reported}
		r := &Runner{Run: run, Parallel: workers, Reporter: rep, Fatal: func(err error) bool { return errors.Is(err, errFatal) }}
		res := r.RunAll(context.Background(), jobs(8))
		var ran []int
		for i, jr := range res {
			if jr.Ran {
				ran = append(ran, i)
			}
		}
		ok := slices.Equal(ran, []int{0, 1, 2, 3}) // one worker: in order, to the fatal job
		if workers > 1 {
			// 7, and those of 6 and 5 that a worker took before 7 ended.
			ok = len(ran) > 0 && ran[0] >= 5 && ran[len(ran)-1] == 7
		}
		if !ok || started != len(ran) {
			t.Errorf("%d workers: jobs %v ran (%d started)", workers, ran, started)
		}
	}
}

// fatalReporter closes reported once the fatal job is reported.
type fatalReporter struct {
	fatal    error
	reported chan struct{}
}

func (*fatalReporter) Start(int, int)                             {}
func (*fatalReporter) JobStart(int, scenario.Job, func() float64) {}
func (*fatalReporter) Interrupted(int)                            {}
func (*fatalReporter) Finish(bool)                                {}
func (r *fatalReporter) JobDone(ev JobEvent) {
	if errors.Is(ev.Err, r.fatal) {
		close(r.reported)
	}
}

// One worker starts jobs in job order; several start the largest size
// first, ties in job order, so a sweep's biggest job does not run alone at
// the end.
func TestStartOrder(t *testing.T) {
	js := []scenario.Job{{Size: 8}, {Size: 64}, {Size: 8}, {Size: 16}, {Size: 64}, {Size: 0}}
	if got, want := StartOrder(js, 1), []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("1 worker: %v, want %v", got, want)
	}
	if got, want := StartOrder(js, 2), []int{1, 4, 3, 0, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("2 workers: %v, want %v", got, want)
	}
	if got := StartOrder(nil, 2); len(got) != 0 {
		t.Errorf("no jobs: %v", got)
	}
}

// RunAll starts jobs in StartOrder and still returns them in job order.
func TestRunnerStartsLargestFirst(t *testing.T) {
	var mu sync.Mutex
	var started []int
	var first sync.WaitGroup // the first two jobs run together
	first.Add(2)
	run := func(_ context.Context, j scenario.Job, _ engine.Progress) (metrics.SizeResult, error) {
		mu.Lock()
		started = append(started, j.SizeIndex)
		n := len(started)
		mu.Unlock()
		if n <= 2 {
			first.Done()
			first.Wait()
		}
		var r metrics.SizeResult
		r.SizeBytes, r.Complete = int64(j.Size), true
		return r, nil
	}
	res := (&Runner{Run: run, Parallel: 2}).RunAll(context.Background(), jobs(4)) // sizes 1..4 B
	for i, jr := range res {
		if jr.Job.SizeIndex != i || jr.Result.SizeBytes != int64(i+1) {
			t.Errorf("result %d: %+v", i, jr)
		}
	}
	// The two workers hold the two largest jobs before either ends; the
	// two smallest come after them, in either order.
	if len(started) != 4 || min(started[0], started[1]) != 2 || max(started[0], started[1]) != 3 ||
		min(started[2], started[3]) != 0 || max(started[2], started[3]) != 1 {
		t.Errorf("start order %v, want jobs 3 and 2 first, then 1 and 0", started)
	}
}

// A budget of cores shared by two runners: each job takes a core for
// each of its parts, so two 2-part jobs never run at once on 2 cores,
// while 1-part jobs do; a job cancelled while it waits never starts.
func TestCoresBoundThePartsRunningAtOnce(t *testing.T) {
	var mu sync.Mutex
	parts, most, ran := 0, 0, 0
	run := func(ctx context.Context, j scenario.Job, _ engine.Progress) (metrics.SizeResult, error) {
		p := max(j.Spec.Sim.Partitions, 1)
		mu.Lock()
		parts += p
		most, ran = max(most, parts), ran+1
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		parts -= p
		mu.Unlock()
		var r metrics.SizeResult
		r.Complete = true
		return r, nil
	}
	withParts := func(n, p int) []scenario.Job {
		js := jobs(n)
		for i := range js {
			js[i].Spec = &scenario.Scenario{}
			js[i].Spec.Sim.Partitions = p
		}
		return js
	}
	cores := NewCores(2)
	var wg sync.WaitGroup
	for range 2 { // two runners (a server's launches) on one budget
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &Runner{Run: run, Parallel: 4, Cores: cores}
			r.RunAll(context.Background(), withParts(3, 2))
		}()
	}
	wg.Wait()
	if most != 2 || ran != 6 {
		t.Errorf("2-part jobs on 2 cores: %d parts at once at most, %d jobs ran (want 2, 6)", most, ran)
	}
	most = 0
	(&Runner{Run: run, Parallel: 4, Cores: cores}).RunAll(context.Background(), withParts(4, 1))
	if most != 2 {
		t.Errorf("1-part jobs on 2 cores: %d at once at most, want 2", most)
	}
	// More parts than the budget: the job takes all of it, and runs.
	most = 0
	(&Runner{Run: run, Parallel: 2, Cores: cores}).RunAll(context.Background(), withParts(2, 4))
	if most != 4 {
		t.Errorf("4-part jobs on 2 cores: %d parts at once at most, want 4 (one job at a time)", most)
	}
	// Waiting for cores that a long job holds, then cancelled: never
	// started.
	ctx, cancel := context.WithCancel(context.Background())
	release, err := cores.Take(context.Background(), withParts(1, 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(10*time.Millisecond, cancel)
	res := (&Runner{Run: run, Parallel: 1, Cores: cores}).RunAll(ctx, withParts(1, 1))
	release()
	if res[0].Ran {
		t.Errorf("a job cancelled while it waited for cores ran: %+v", res[0])
	}
	if DefaultParallel(withParts(2, 2)) != max(1, runtime.NumCPU()/2) || DefaultParallel(jobs(2)) != runtime.NumCPU() {
		t.Errorf("DefaultParallel: %d for 2-part jobs, %d for others, on %d CPUs", DefaultParallel(withParts(2, 2)), DefaultParallel(jobs(2)), runtime.NumCPU())
	}
}
