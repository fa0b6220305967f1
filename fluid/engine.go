package fluid

import (
	"context"
	"errors"
	"fmt"
	"math"

	"fabriclab/engine"
	"fabriclab/fabric"
	"fabriclab/measure"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
	"fabriclab/workload"
)

// Engine is the flow-level engine as an engine.Engine.
type Engine struct{}

// Run builds and runs one job on the flow-level engine
// (engine.RunJob with Engine).
func Run(ctx context.Context, job scenario.Job, progress engine.Progress) (metrics.SizeResult, error) {
	return engine.RunJob(ctx, Engine{}, job, progress)
}

// Plan builds the jobs sel of job's scenario on a fresh topology, ready to
// run: the plan's Layout holds the fluid simulation.
func (Engine) Plan(job scenario.Job, sel plan.Selection) (*plan.Plan, error) {
	s, err := build(job, sel)
	if err != nil {
		return nil, err
	}
	return s.plan, nil
}

// Run simulates p until every message is delivered, the scenario's time
// limit passes or ctx is cancelled, and returns the trace. Its Fabric is
// nil: the fluid model counts no packets, pauses, marks or drops, so the
// result's fabric counters are unavailable (see the package comment).
func (Engine) Run(ctx context.Context, p *plan.Plan, progress engine.Progress) (*engine.Trace, error) {
	l, ok := p.Layout.(*layout)
	if !ok {
		return nil, errors.New("fluid: the plan was not made by the flow engine")
	}
	s := l.s
	if s.ran {
		return nil, errors.New("fluid: a plan runs once")
	}
	s.ran = true
	err := s.run(ctx, progress)
	return s.trace(), err
}

// layout is the flow engine's plan.Layout: the topology's, and the
// simulation built on it.
type layout struct {
	plan.Layout
	s *fsim
}

// Supports reports whether the fluid model can express job; why says what
// it cannot when ok is false. An auto mode runs such jobs on the packet
// engine. The rules live in scenario (FlowEngineSupports), so that
// validate refuses sim.engine: flow where the run would.
func Supports(job scenario.Job) (ok bool, why string) {
	if job.Spec == nil {
		return false, "the job has no scenario"
	}
	return scenario.FlowEngineSupports(job.Spec)
}

// build assembles the fluid simulation of the jobs sel of job: the same
// topology, plan, failures and pinned routes the packet engine builds.
func build(job scenario.Job, sel plan.Selection) (*fsim, error) {
	spec := job.Spec
	if spec == nil {
		return nil, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	if ok, why := Supports(job); !ok {
		return nil, fmt.Errorf("the flow engine cannot run this job: %s", why)
	}
	ts := plan.TopoSpec(spec)
	if limit := int64(spec.Sim.MemoryLimit); limit > 0 {
		if need := topo.RouteTableBytes(ts); need > limit {
			return nil, fmt.Errorf("the route tables need about %v, more than sim.memory_limit %v",
				units.Size(need), units.Size(limit))
		}
	}
	tp, err := topo.Build(sim.NewScheduler(), job.Seed, ts)
	if err != nil {
		return nil, err
	}
	s := &fsim{job: job, spec: spec, tp: tp}
	p, err := plan.CompileOptions(job, &layout{plan.TopologyLayout(tp), s}, plan.Options{Select: sel})
	if err != nil {
		return nil, err
	}
	s.plan, s.dag = p, p.DAG
	fs, err := plan.Failures(spec, tp)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if f.At > 0 {
			s.failures = append(s.failures, f)
		}
	}
	plan.FailAtStart(tp, fs)
	if s.routes, err = plan.Routes(job); err != nil {
		return nil, err
	}
	if err := plan.ApplyRoutes(spec, tp, s.routes, false); err != nil {
		return nil, err
	}
	if err := plan.InstallPaths(s.plan, tp); err != nil {
		return nil, err
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	return s, nil
}

// init sets up the model's parameters and state from the built plan.
func (s *fsim) init() error {
	spec := s.spec
	net := s.tp.Net
	s.mtu, s.ovh = int64(spec.NIC.MTU), int64(spec.NIC.Overhead)
	if s.mtu <= 0 {
		return fmt.Errorf("nic.mtu must be positive, got %d", s.mtu)
	}
	tk := scenario.TransportOf(spec)
	ackEvery := max(spec.NIC.AckEvery, 1)
	cc := false
	switch tk.Name {
	case "roce":
		dq, err := scenario.DCQCNParams(spec)
		if err != nil {
			return err
		}
		cc = dq.Enabled && spec.Switch.ECN.Enabled
		if mi := int64(spec.NIC.MaxInflight); mi > 0 {
			s.window = float64(mi)
		}
	case "dctcp":
		cc = spec.Switch.ECN.Enabled
		ackEvery = max(spec.Transport.TCP.AckEvery, 1)
	case "tcp":
		ackEvery = max(spec.Transport.TCP.AckEvery, 1)
	}
	// ACKs (84 B, the transports' control frame) every ackEvery data
	// packets of a full MTU.
	s.ackFrac = 84 / float64(int64(ackEvery)*(s.mtu+s.ovh))
	s.spread = spec.Switch.PFC.Enabled && !cc
	// Switch policies by switch: the tier's override or the default.
	s.dynamic = make([]bool, len(net.Switches))
	for i, sw := range net.Switches {
		f := spec.Switch.Forwarding
		for _, tf := range spec.Switch.ForwardingTiers {
			if tf.Tier == sw.Tier {
				f = tf.Forwarding
			}
		}
		s.dynamic[i] = !fabric.Policies[f].Static()
	}
	nl := len(net.Ports)
	s.capBps = make([]float64, nl)
	for _, pt := range net.Ports {
		if !pt.Dead() {
			s.capBps[pt.ID] = float64(pt.Rate)
		}
	}
	s.linkUses = make([][]linkUse, nl)
	s.ackLoad = make([]float64, nl)
	s.linkMark = make([]uint32, nl)
	s.rem = make([]float64, nl)
	s.wsum = make([]float64, nl)
	s.cnt = make([]int32, nl)
	s.paused = make([]bool, nl)
	s.touch = make([]uint32, nl)
	n := len(s.dag.Msgs)
	s.start = make([]sim.Time, n)
	s.end = make([]sim.Time, n)
	s.next = make([]int32, n)
	for i := range s.end {
		s.start[i], s.end[i], s.next[i] = -1, -1, -1
	}
	nc := len(s.plan.Conns)
	s.conns = make([]conn, nc)
	for c, pc := range s.plan.Conns {
		s.conns[c] = conn{src: pc.Src, dst: pc.Dst, sqp: pc.SQP, dqp: pc.DQP, head: -1, tail: -1, latWire: -1}
	}
	s.path, s.rpath = make([]span, nc), make([]span, nc)
	s.rate, s.nrate, s.crem, s.ceil = make([]float64, nc), make([]float64, nc), make([]float64, nc), make([]float64, nc)
	s.last, s.began, s.at = make([]sim.Time, nc), make([]sim.Time, nc), make([]sim.Time, nc)
	s.hpos = make([]int32, nc)
	for c := range nc {
		s.ceil[c], s.hpos[c] = math.Inf(1), -1
	}
	s.connMark = make([]uint32, nc)
	s.frozen = make([]bool, nc)
	s.lh.pos, s.lh.key = make([]int32, nl), make([]float64, nl)
	for _, m := range s.dag.Msgs {
		s.total += m.Bytes
	}
	s.exec = workload.NewExecutor(s.dag)
	s.quantize = len(s.conns) >= quantizeConns
	return nil
}

// trace is what the run recorded: every message's start and delivery and
// the plan's bounds on this topology; no fabric counters.
func (s *fsim) trace() *measure.Trace {
	t := &measure.Trace{Start: s.start, End: s.end, Delivered: s.done, Cut: s.exec.Cut(),
		Now: s.now, Events: s.events, Window: [2]int64{-1, -1},
		Bounds: measure.TopologyBounds(s.plan, s.tp)}
	return t
}
