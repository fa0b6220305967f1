// Package engines picks the simulator a job runs on — the scenario's
// sim.engine: the packet engine (package lab, the reference), the
// flow-level engine (package fluid), or auto: the flow engine for jobs of
// at least sim.flow_above bytes that it can express, the packet engine for
// the rest. Run is the job function of `run`, the web server and workers.
package engines

import (
	"context"
	"fmt"

	"fabriclab/engine"
	"fabriclab/fluid"
	"fabriclab/lab"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
)

// Engine names.
const (
	Packet = "packet"
	Flow   = "flow"
	Auto   = "auto"
)

// For is the engine job runs on, and why when auto chose the packet
// engine for a job of the flow engine's size.
func For(job scenario.Job) (name, why string) {
	if job.Spec == nil {
		return Packet, ""
	}
	switch job.Spec.Sim.Engine {
	case Flow:
		return Flow, ""
	case Auto:
		if job.Size < job.Spec.Sim.FlowAbove {
			return Packet, ""
		}
		if ok, why := fluid.Supports(job); !ok {
			return Packet, why
		}
		return Flow, ""
	}
	return Packet, ""
}

// Run runs job on the engine For picks. A flow-engine row says so
// (metrics.SizeResult.Engine); a job the flow engine cannot express,
// asked for by name, fails saying why.
func Run(ctx context.Context, job scenario.Job, progress engine.Progress) (metrics.SizeResult, error) {
	name, _ := For(job)
	if name != Flow {
		return lab.Run(ctx, job, progress)
	}
	if err := flowRefusal(job); err != nil {
		var r metrics.SizeResult
		r.SizeBytes, r.Engine, r.Error = int64(job.Size), Flow, err.Error()
		return r, err
	}
	r, err := fluid.Run(ctx, job, progress)
	r.Engine = Flow
	return r, err
}

// Check refuses what run would refuse when it builds job, without
// running it. A job on the flow engine must be one the flow engine can
// express, within sim.memory_limit (flowRefusal: cheap, made for every
// such job). A job with settings that
// only a build can check — traffic engineering's equal-cost paths
// (switch.forwarding: te, at most 4,096 per host pair) and
// sim.telemetry.flows' ids, which name messages of the compiled workload —
// is built on its engine, within sim.memory_limit, and the build
// discarded; other jobs are not built. validate calls it so that a file
// that validates runs.
func Check(job scenario.Job) error { return check(job, true) }

// check is Check; fits false leaves out the flow engine's memory check
// (Accept has made it, for every engine).
func check(job scenario.Job, fits bool) error {
	if job.Spec == nil {
		return nil
	}
	name, _ := For(job)
	if name == Flow {
		if ok, why := fluid.Supports(job); !ok {
			return flowUnsupported(why)
		}
		if fits {
			if err := Fits(job); err != nil {
				return err
			}
		}
	}
	if !needsBuild(job.Spec) {
		return nil
	}
	var eng engine.Engine = lab.Engine{} // its build checks the memory estimate itself
	if name == Flow {
		eng = fluid.Engine{}
	}
	_, err := eng.Plan(job, plan.Together)
	return err
}

// Fits refuses, as a build of job would, a job whose workload cannot be
// compiled or whose estimated memory is above its sim.memory_limit
// (lab.EstimateMemory counts messages without building). The estimate
// counts the packet engine's state; the flow engine holds the same DAG,
// plan and connections and less per connection (a 1,024-rank all-to-all
// on a k=16 fat-tree: a peak heap of 1.05 GiB, sampled through the run,
// against 1.15 estimated), so for it the check errs on the safe side.
func Fits(job scenario.Job) error {
	if job.Spec == nil {
		return nil
	}
	e, err := lab.EstimateMemory(job)
	if err == nil {
		err = e.Check(int64(job.Spec.Sim.MemoryLimit))
	}
	return err
}

// Accept is what every way in — validate, submit (run --queue) and the web
// server's launch page — refuses before it takes a job: a job that does
// not fit (Fits), then what only a build finds (Check, within the
// memory limit just checked). A job it accepts fails only on what a run
// alone can find.
func Accept(job scenario.Job) error {
	if err := Fits(job); err != nil {
		return err
	}
	return check(job, false)
}

// needsBuild reports whether spec has a setting that Check builds to check.
func needsBuild(spec *scenario.Scenario) bool {
	return spec.Switch.Forwarding == "te" || len(spec.Sim.Telemetry.Flows.List) > 0
}

// flowRefusal is why the flow engine would refuse job before building
// it: a job it cannot express (fluid.Supports), or one that does not fit
// (Fits); nil if it would build it.
func flowRefusal(job scenario.Job) error {
	if ok, why := fluid.Supports(job); !ok {
		return flowUnsupported(why)
	}
	return Fits(job)
}

// flowUnsupported is the refusal of a job the flow engine cannot express.
func flowUnsupported(why string) error {
	return fmt.Errorf("sim.engine flow: %s; use sim.engine packet or auto", why)
}

// With returns job running on engine name (packet, flow or auto) instead
// of its scenario's sim.engine: run --engine. The scenario is copied.
func With(job scenario.Job, name string) scenario.Job {
	if job.Spec == nil || job.Spec.Sim.Engine == name {
		return job
	}
	s := *job.Spec
	s.Sim.Engine = name
	job.Spec = &s
	return job
}
