// Package engine is the seam between the plan of a job and what executes
// it. An Engine builds the layout it runs a job on (a simulated fabric, a
// set of real hosts), compiles the job's plan on it (package plan), runs
// the plan and records a Trace; RunJob does the rest for any engine: the
// together run, each job alone for its interference factor, the
// measurements (package measure) and, when the engine has a fabric, the
// byte-conservation check.
//
// The packet-level simulator (package lab) is the reference engine. A new
// engine implements Engine, driving a workload.Executor for the DAG's
// dependencies, and is run with RunJob.
package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fabriclab/measure"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
)

// Progress receives the fraction of the job done (0..1), roughly. It may
// be nil.
type Progress func(frac float64)

// Trace is what an engine recorded of one run of a plan (see
// measure.Trace).
type Trace = measure.Trace

// Engine executes plans.
type Engine interface {
	// Plan builds what the jobs sel of job's scenario run on (one fresh
	// layout per call: an idle fabric, the hosts of an inventory) and
	// compiles them on it (plan.Compile / plan.CompileOptions with
	// Options.Select = sel).
	Plan(job scenario.Job, sel plan.Selection) (*plan.Plan, error)
	// Run executes p, made by this engine's Plan, until every message is
	// delivered, the scenario's sim.time_limit passes or ctx is
	// cancelled (the trace then holds what finished, and the error is
	// nil). An error with a trace says why a run ended without finishing
	// although nothing stopped it (e.g. a transport gave up on messages).
	Run(ctx context.Context, p *plan.Plan, progress Progress) (*Trace, error)
}

// RunJob runs one job on eng and measures it. Cancelling ctx stops the
// run early; the result then has Complete=false and holds what finished.
//
// A scenario with jobs: runs them all together, then each alone on a
// fresh layout (one after the other) for its alone CCT and interference
// factor; progress covers the together run only for the first half.
func RunJob(ctx context.Context, eng Engine, job scenario.Job, progress Progress) (metrics.SizeResult, error) {
	wall := time.Now()
	fail := func(r metrics.SizeResult, err error) (metrics.SizeResult, error) {
		r.Error = err.Error()
		return r, err
	}
	p, err := eng.Plan(job, plan.Together)
	if err != nil {
		var r metrics.SizeResult
		r.SizeBytes = int64(job.Size)
		return fail(r, err)
	}
	scaled := progress
	if len(p.Parts) > 1 && progress != nil {
		scaled = func(f float64) { progress(f / 2) }
	}
	t, err := eng.Run(ctx, p, scaled)
	if t == nil {
		if err == nil {
			err = errors.New("the engine returned no trace")
		}
		var r metrics.SizeResult
		r.SizeBytes = int64(job.Size)
		return fail(r, err)
	}
	fabric := t.Fabric != nil
	r := measure.Result(p, t)
	if err != nil {
		return fail(r, err)
	}
	for i := 0; i < len(r.Jobs) && ctx.Err() == nil; i++ {
		ap, err := eng.Plan(job, plan.Alone(i))
		if err != nil {
			return fail(r, err)
		}
		at, err := eng.Run(ctx, ap, nil)
		if err != nil || at == nil {
			if err == nil {
				err = errors.New("the engine returned no trace")
			}
			return fail(r, fmt.Errorf("job %q alone: %v", ap.Parts[0].Name, err))
		}
		ar := measure.Summary(ap, ap.Parts[0], at)
		r.Jobs[i].SetAlone(ar.CCTS, ar.Complete)
		if progress != nil {
			progress(0.5 + 0.5*float64(i+1)/float64(len(r.Jobs)))
		}
	}
	r.WallS = time.Since(wall).Seconds()
	if c := r.Conservation; fabric && !c.OK {
		// A simulator bug, never the user's: say so loudly.
		return fail(r, fmt.Errorf("byte conservation violated: injected %d ≠ delivered %d + dropped %d + in flight %d",
			c.InjectedBytes, c.DeliveredBytes, c.DroppedBytes, c.InFlightBytes))
	}
	if progress != nil {
		progress(1)
	}
	return r, nil
}
