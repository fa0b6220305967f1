package runner

import (
	"bytes"
	"context"
	"strings"
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
