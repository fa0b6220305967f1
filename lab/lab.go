// Package lab is the packet engine: it places a job's plan on a simulated
// fabric (topology, switches, NICs, the scenario's transport), runs it on
// the packet-level simulator and records the trace that package measure
// turns into results. It is the reference engine.Engine; Run runs one job
// on it (engine.RunJob).
package lab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"fabriclab/engine"
	"fabriclab/fabric"
	"fabriclab/internal/hugepages"
	"fabriclab/measure"
	"fabriclab/metrics"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/transport/roce"
	"fabriclab/workload"
)

// Progress receives the fraction of the job done (0..1), roughly.
type Progress = engine.Progress

// Engine is the packet-level simulator as an engine.Engine.
type Engine struct{}

// Plan builds the jobs sel of job's scenario on a fresh simulated fabric,
// ready to run: the plan's Layout holds the simulation.
func (Engine) Plan(job scenario.Job, sel plan.Selection) (*plan.Plan, error) {
	s, err := build(job, sel)
	if err != nil {
		return nil, err
	}
	return s.Plan, nil
}

// Run simulates p until every message is delivered, the scenario's time
// limit passes, or ctx is cancelled, and returns the trace; the error
// says why a run stalled (see Sim.Run).
func (Engine) Run(ctx context.Context, p *plan.Plan, progress engine.Progress) (*engine.Trace, error) {
	l, ok := p.Layout.(*layout)
	if !ok {
		return nil, errors.New("lab: the plan was not made by the packet engine")
	}
	s := l.sim
	if n := s.Job.Spec.Sim.Telemetry.Flows.Top; n > 0 && s.tel != nil {
		// The slowest flows are known only after the run: run it first
		// without telemetry, then again following them (the same job and
		// seed: the same run, which is checked). One simulation is alive
		// at a time: the plan's goes first.
		job := s.Job
		l.sim, s = nil, nil
		first, err := buildWith(job, plan.Together, buildOpts{noTelemetry: true})
		if err != nil {
			return nil, err
		}
		half := progress
		if progress != nil {
			half = func(f float64) { progress(f / 2) }
			defer progress(1)
		}
		first.Run(ctx, half)
		if err := first.stalled(ctx); err != nil || ctx.Err() != nil {
			return first.Trace(), err
		}
		ids := first.slowest(n)
		_, ends := first.times()
		first = nil
		if s, err = buildWith(job, plan.Together, buildOpts{flows: ids}); err != nil {
			return nil, err
		}
		// The plan's topology is the new one's, the same fabric.
		l.sim, l.Layout = s, s.Plan.Layout.(*layout).Layout
		if progress != nil {
			half = func(f float64) { progress(0.5 + f/2) }
		}
		s.Run(ctx, half)
		if _, again := s.times(); ctx.Err() == nil && !slices.Equal(ends, again) {
			return s.Trace(), errors.New("sim.telemetry.flows: the second run, which followed the slowest flows, did not repeat the first (a bug: please report it with the scenario)")
		}
		return s.Trace(), s.stalled(ctx)
	}
	s.Run(ctx, progress)
	return s.Trace(), s.stalled(ctx)
}

// slowest is the n slowest measured flows of a finished run by slowdown
// (flows that never finished first, earliest start first), ties to the
// lower ID.
func (s *Sim) slowest(n int) []int32 {
	type cand struct {
		id   int32
		slow float64
	}
	var cs []cand
	b := s.bounds()
	start, end := s.times()
	for _, pt := range s.Plan.Parts {
		for i := pt.Lo; i < pt.Hi; i++ {
			m := &s.DAG.Msgs[i]
			st, en := start[i], end[i]
			if m.Marker || st < 0 || pt.DAG.Iteration != nil && pt.DAG.Iteration[i-pt.Lo] < 0 {
				continue // bookkeeping, not started, or a warmup iteration
			}
			slow := math.Inf(1)
			if en >= 0 {
				slow = float64(en-st) / float64(max(b.AloneFCT(m.Src, m.Dst, m.Bytes), 1))
			}
			cs = append(cs, cand{i, slow})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, c := cs[i], cs[j]
		if a.slow != c.slow {
			return a.slow > c.slow
		}
		if math.IsInf(a.slow, 1) {
			return start[a.id] < start[c.id]
		}
		return false
	})
	ids := make([]int32, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		ids = append(ids, c.id)
	}
	return ids
}

// layout is the packet engine's plan.Layout: the simulated topology, and
// the simulation built on it.
type layout struct {
	plan.Layout
	sim *Sim
}

// Run builds and simulates one job (engine.RunJob with the packet
// engine). Cancelling ctx stops the simulation early; the result then has
// Complete=false and holds what finished.
func Run(ctx context.Context, job scenario.Job, progress Progress) (metrics.SizeResult, error) {
	return engine.RunJob(ctx, Engine{}, job, progress)
}

// Sim is a built, ready-to-run simulation of one plan. Tests use it to
// reach inside (the network, the transport) after a run.
type Sim struct {
	Job   scenario.Job
	Sched *sim.Scheduler
	Topo  *topo.Topology
	// RoCE is the RoCE transport when the scenario runs it (nil for the
	// others); tests reach inside it.
	RoCE *roce.Transport
	Plan *plan.Plan
	DAG  *workload.DAG // Plan.DAG
	tr   hostTransport

	exec     *workload.Executor // the DAG's dependencies
	explain_ *explainer         // explain mode's observer (nil when off)
	routes   []topo.Route       // switch.routes_file, re-applied after reconvergence

	// windowData is the data payload hosts had received halfway through
	// and at the end of a messages workload's arrival window (−1: not
	// measured).
	windowData [2]int64
	window     bool // the snapshots are scheduled
	// abandoned holds the messages a transport gave up on (Homa after
	// max_resends timeouts) before they were delivered, and when.
	abandoned map[int32]sim.Time
	// outages are the links' failures and flaps (topology.failures).
	outages []*linkFailure
	// deadlock is the PFC deadlock that stopped the run (nil: none).
	deadlock *fabric.Deadlock
	dists    sizeDists // the messages workloads' size distributions, read once
	start    []sim.Time
	end      []sim.Time
	done     int

	// A part of a partitioned run (partition.go; parts 0 otherwise): the
	// hosts it owns, every port's part, and the windows' length.
	part, parts int
	partOf      []int
	lookahead   sim.Time
	cross       *crossing // deliveries other parts wait on (nil: none)
	// framer is the transport when it frames messages at their receivers
	// (TCP), and framing the framing for other parts posted in this
	// window (partition_framing.go).
	framer  framer
	framing []crossFraming
	// others are the other parts, built by Run; merged is the whole
	// fabric's trace once they have run, and partErr why they stalled.
	others  []*Sim
	merged  *measure.Trace
	partErr error
	// cutHere counts the messages this part sends that its executor cut
	// (DAG.Until).
	cutHere int

	// tel samples the ports over time (sim.telemetry; nil when off, and
	// for a job built alone).
	tel *telemetry
	// opts are what the build was asked for (the other parts of a
	// partitioned run are built with the same).
	opts buildOpts
}

// Build assembles the simulation of job without running it: every job of
// its scenario (the workload and jobs:) together.
func Build(job scenario.Job) (*Sim, error) { return build(job, plan.Together) }

// BuildAlone assembles the simulation of job i of job's scenario alone on
// the fabric (0 = the workload, i = jobs[i−1]), started at time 0.
func BuildAlone(job scenario.Job, i int) (*Sim, error) { return build(job, plan.Alone(i)) }

// Jobs is how many jobs job's scenario runs together.
func Jobs(job scenario.Job) int { return plan.Jobs(job) }

func build(job scenario.Job, sel plan.Selection) (*Sim, error) {
	return buildWith(job, sel, buildOpts{})
}

// buildOpts are what a second run of the same job changes: the flows
// telemetry follows (the slowest of the first run), or no telemetry at
// all (the first run of "top N" flows, which only ranks them).
type buildOpts struct {
	flows       []int32
	noTelemetry bool
	part        int // which part of a partitioned run (sim.partitions)
}

func buildWith(job scenario.Job, sel plan.Selection, o buildOpts) (*Sim, error) {
	spec := job.Spec
	if spec == nil {
		return nil, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	if len(spec.Probes) > 0 {
		return nil, errors.New("probes: paced UDP probes run on real hosts only (--engine hosts); the packet engine has no UDP transport")
	}
	ts := TopoSpec(spec)
	limit := int64(spec.Sim.MemoryLimit)
	if err := checkMemory(limit, topo.RouteTableBytes(ts), "the route tables"); err != nil {
		return nil, err
	}
	// Everything the build will hold, estimated before any of it is
	// allocated (a job the estimate cannot count fails below, in its own
	// words, before allocating).
	jobs := sel.Jobs(job)
	dists := sizeDists{}
	est := estimateMemory(job, jobs, dists)
	if err := est.Check(limit); err != nil {
		return nil, err
	}
	sc := sim.NewScheduler()
	tp, err := topo.Build(sc, job.Seed, ts)
	if err != nil {
		return nil, err
	}
	s := &Sim{Job: job, Sched: sc, Topo: tp, dists: dists, opts: o}
	if sel == plan.Together && !o.noTelemetry {
		if s.tel, err = newTelemetry(s); err != nil {
			return nil, err
		}
	}
	counts := make([]workload.Counts, plan.Jobs(job))
	for k, i := range jobs {
		counts[i] = est.Jobs[k].Counts
	}
	p, err := plan.CompileOptions(job, &layout{plan.TopologyLayout(tp), s},
		plan.Options{Select: sel, Counts: counts, Dists: plan.SizeDists(dists), Conns: est.Conns})
	if err != nil {
		return nil, err
	}
	s.Plan, s.DAG = p, p.DAG
	if s.tr, err = newTransport(s, tp.Net, s.delivered); err != nil {
		return nil, err
	}
	if s.tel != nil {
		if err := s.tel.bind(); err != nil {
			return nil, err
		}
		ids := o.flows
		if ids == nil {
			ids = flowIDs(spec.Sim.Telemetry)
		}
		if len(ids) > 0 {
			if err := s.tel.follow(ids); err != nil {
				return nil, err
			}
		}
	}
	for h, id := range tp.ScaleUpEndpoint {
		s.tr.setName(id, fmt.Sprintf("host%d-scaleup", h))
	}
	if err := s.scheduleFailures(); err != nil {
		return nil, err
	}
	if spec.Switch.PFC.Enabled && mayLoop(spec, p) {
		// A PFC deadlock stops the run, named (fabric/deadlock.go).
		tp.Net.OnDeadlock = func(d *fabric.Deadlock) {
			s.deadlock = d
			s.Sched.Stop()
		}
	}
	if s.routes, err = plan.Routes(job); err != nil {
		return nil, err
	}
	if err := s.applyRoutes(false); err != nil {
		return nil, err
	}
	if err := plan.InstallPaths(p, tp); err != nil {
		return nil, err
	}
	if spec.Sim.Explain {
		s.explain_ = newExplainer(len(s.DAG.Msgs))
		tp.Net.SetObserver(s.explain_)
	}
	if n := spec.Sim.Partitions; n > 1 && sel == plan.Together {
		if err := s.partition(o.part, n); err != nil {
			return nil, err
		}
	}
	// A storm pauses the switch's port in the part that owns it, and
	// counts the host's frames in the host's part (one part: both).
	for _, st := range spec.Topology.PFCStorms {
		pause := s.ownsPort(tp.Net.HostPorts[st.Host].Peer.ID)
		tp.Net.Storm(st.Host, uint8(spec.NIC.DataPriority), st.At, st.Until, pause, s.owns(st.Host))
	}
	s.connect()
	s.windowData = [2]int64{-1, -1}
	if w := spec.Workload; w.Kind == "messages" && len(p.Parts) == 1 {
		s.window = true
		s.Sched.At(w.Duration/2, (*windowEnd)(s), 0)
		s.Sched.At(w.Duration, (*windowEnd)(s), 1)
	}
	if s.tel != nil && !s.Done() && s.parts <= 1 {
		s.tel.start() // a partitioned run samples between its windows
	}
	return s, nil
}

// mayLoop reports whether the fabric's routes could close a cycle of
// buffer dependencies: pinned paths, a routes file, failures (routes
// recomputed around a dead link may bounce through a leaf) or a topology
// of any shape. Shortest paths on the built-in Clos topologies go up, then
// down, and never can: the deadlock search is off there.
func mayLoop(spec *scenario.Scenario, p *plan.Plan) bool {
	k := spec.Topology.Kind
	return len(p.DAG.Pins) > 0 || spec.Switch.RoutesFile != "" || len(spec.Topology.Failures) > 0 || k == "custom" || k == "ns3"
}

// windowEnd notes what the fabric had delivered halfway through (arg 0)
// and at the end (arg 1) of a messages workload's arrival window.
type windowEnd Sim

func (w *windowEnd) OnEvent(_ sim.Time, arg uint64) { w.windowData[arg] = w.Topo.Net.DeliveredData }

// TopoSpec converts the scenario's topology and switch sections (see
// plan.TopoSpec).
func TopoSpec(spec *scenario.Scenario) topo.Spec { return plan.TopoSpec(spec) }

// connect opens the plan's connections on the transport, in order, and
// starts the DAG's roots.
func (s *Sim) connect() {
	// The transports number connections at both ends in the order they
	// are opened, which is the plan's 5-tuple (TestPlanTuplesAreOnTheWire).
	setter, _ := s.tr.(interface{ setEntropy(conn, port int32) bool })
	for c, cn := range s.Plan.Conns {
		s.tr.connect(int32(c), int(cn.Src), int(cn.Dst))
		if s.Job.Spec.NIC.Entropy == "qp-aware" && setter != nil {
			setter.setEntropy(int32(c), cn.SQP)
		}
	}
	n := len(s.DAG.Msgs)
	s.start = make([]sim.Time, n)
	s.end = make([]sim.Time, n)
	for i := range s.end {
		s.start[i], s.end[i] = -1, -1
	}
	s.exec = workload.NewExecutor(s.DAG)
	s.exec.OwnTimers = true // one scheduler event per message that starts later
	if s.parts > 1 && s.DAG.Until > 0 {
		// The windows end once every message is delivered or cut: each
		// part counts the cuts of what it sends (its executor cuts a
		// message, and a chain of writes behind it, once it has heard the
		// last dependency, as only the sender's surely does).
		s.exec.OnCut = func(m int32) {
			if s.owns(int(s.DAG.Msgs[m].Src)) {
				s.cutHere++
			}
		}
	}
	now := s.Sched.Now()
	s.startAll(s.exec.Ready(now), now)
}

// startAll starts the messages the executor released, in its order: a
// message with a later earliest start gets an event at that time, a
// marker is already delivered, any other message is posted on its
// connection.
func (s *Sim) startAll(msgs []int32, now sim.Time) {
	for _, i := range msgs {
		m := &s.DAG.Msgs[i]
		if !s.owns(int(m.Src)) {
			continue // another part's (partition.go)
		}
		if m.At > now {
			s.timedMarker(i, m.At)
			s.Sched.At(m.At, (*releaser)(s), uint64(i))
			continue
		}
		s.start[i] = now
		if m.Marker {
			s.end[i] = now
			s.done++
			s.sendDelivery(i, now)
			continue
		}
		s.post(i, m)
	}
	if s.Done() {
		s.Sched.Stop()
	}
}

// releaser starts a message at its earliest start.
type releaser Sim

func (r *releaser) OnEvent(now sim.Time, arg uint64) {
	s := (*Sim)(r)
	s.markerStarted(int32(arg))
	s.startAll(s.exec.Start(int32(arg), now), now)
}

// delivered hears the transport deliver message i.
func (s *Sim) delivered(i int32, now sim.Time) {
	if s.end[i] >= 0 {
		return
	}
	s.end[i] = now
	s.done++
	s.sendDelivery(i, now)
	s.startAll(s.exec.Delivered(i, now), now)
}

// abandon records that the transport gave up on message i.
func (s *Sim) abandon(i int32, now sim.Time) {
	if s.end[i] >= 0 {
		return // delivered after all (the other side gave up late)
	}
	if s.abandoned == nil {
		s.abandoned = map[int32]sim.Time{}
	}
	if _, ok := s.abandoned[i]; !ok {
		s.abandoned[i] = now
	}
}

// sizeDists is the build's cache of size distributions (plan.SizeDists),
// shared by the plan and the transport.
type sizeDists plan.SizeDists

func (m sizeDists) get(name, dir string) (*workload.SizeDist, error) {
	return plan.SizeDists(m).Get(name, dir)
}

// stalled explains a run that ended with messages missing although it was
// neither stopped nor out of time: nothing was left to happen. Either the
// transport gave up on them (Homa's abandonment) or it lost track of them,
// a simulator bug, never the user's. Nil for any other run.
func (s *Sim) stalled(ctx context.Context) error {
	if s.parts > 1 {
		return s.partErr
	}
	if d := s.deadlock; d != nil && !s.Done() {
		return errors.New(d.String() + "; the run stopped there")
	}
	if s.Done() || ctx.Err() != nil || s.Sched.Pending() > 0 {
		return nil
	}
	if len(s.abandoned) > 0 {
		return abandonedError(len(s.abandoned))
	}
	return fmt.Errorf("the simulation stalled at %v: %d messages never completed and no event was left (a transport bug; please report it with the scenario)",
		s.Sched.Now(), len(s.DAG.Msgs)-s.done-s.cut())
}

// abandonedError says that the transport gave up on n messages.
func abandonedError(n int) error {
	return fmt.Errorf("Homa abandoned %d messages after transport.homa.max_resends timeouts in a row; they never completed (raise max_resends or resend_timeout, or look for lost links)", n)
}

// times are every message's start and end (−1: not yet) in the whole
// run: the merged parts' after a partitioned run.
func (s *Sim) times() (start, end []sim.Time) {
	if s.merged != nil {
		return s.merged.Start, s.merged.End
	}
	return s.start, s.end
}

// Done reports whether every message was delivered or cut (DAG.Until).
func (s *Sim) Done() bool { return s.done+s.cut() == len(s.DAG.Msgs) }

// cut is how many messages the executor cut (0 before it runs).
func (s *Sim) cut() int {
	if s.exec == nil {
		return 0
	}
	return s.exec.Cut()
}

// payload is the bytes of every message: what progress counts toward.
func (s *Sim) payload() (total int64) {
	for _, m := range s.DAG.Msgs {
		total += m.Bytes
	}
	return total
}

// Run simulates until every message is delivered, the scenario's time limit
// passes, or ctx is cancelled.
func (s *Sim) Run(ctx context.Context, progress Progress) {
	if s.parts > 1 {
		s.merged, s.partErr = s.runParts(ctx, progress)
		return
	}
	total := s.payload()
	s.Sched.StopPollEvery = 1 << 14
	s.Sched.StopHook = func(sim.Time) bool {
		hugepages.Maintain()
		if progress != nil && total > 0 {
			progress(float64(s.tr.deliveredPayload()) / float64(total))
		}
		return ctx.Err() != nil
	}
	s.Sched.Run(s.Job.Spec.Sim.TimeLimit)
}

// linkFailure is one outage of a link: it goes down (arg 0), routes
// converge around it (arg 1); with an end it comes back up (arg 2) and
// routes converge back (arg 3). What it lost while down is its record.
type linkFailure struct {
	s      *Sim
	pt     *fabric.Port
	rec    *metrics.LinkFailure
	before [2]int64 // the link's losses (packets, bytes) before it went down
	closed bool
}

func (f *linkFailure) OnEvent(now sim.Time, arg uint64) {
	net := f.s.Topo.Net
	switch arg {
	case 0:
		// What is queued for it or on its wire dies with it: that counts.
		f.before[0], f.before[1] = f.losses()
		net.FailLink(f.pt)
	case 2:
		f.finish()
		net.RestoreLink(f.pt)
	default:
		topo.ComputeRoutes(f.s.Topo)
		// Pinned routes stay pinned where their link still works; one
		// over the failed link falls back to the computed routes. (A table
		// that loops only after the failure was validated at build and is
		// left as the subnet manager would leave it.)
		_ = f.s.applyRoutes(true)
		// Traffic engineering's and a flow list's pins through the failed
		// link give way to the new routes.
		net.DropBrokenPins()
	}
}

// losses is what both ends of the link have lost to failing so far.
func (f *linkFailure) losses() (packets, bytes int64) {
	a, ab, _ := f.pt.Losses()
	b, bb, _ := f.pt.Peer.Losses()
	return a + b, ab + bb
}

// finish closes the record (at the link's return, or at the run's end):
// what it lost while down, and how long after it failed traffic still
// ran into it — its last loss: the failover time.
func (f *linkFailure) finish() {
	if f.closed {
		return
	}
	f.closed = true
	p, b := f.losses()
	f.rec.LostPackets, f.rec.LostBytes = p-f.before[0], b-f.before[1]
	_, _, la := f.pt.Losses()
	_, _, lb := f.pt.Peer.Losses()
	if last := max(la, lb).Seconds(); f.rec.LostPackets > 0 && last >= f.rec.DownS {
		f.rec.FailoverS = last - f.rec.DownS
	}
}

func (s *Sim) applyRoutes(skipDead bool) error {
	return plan.ApplyRoutes(s.Job.Spec, s.Topo, s.routes, skipDead)
}

// scheduleFailures resolves topology.failures to links: those at time 0
// are down from the start (routes avoid them), the others fail mid-run and
// routes converge topology.convergence later; a link with an end comes
// back up then, and routes converge back; a flapping link does it Count
// times. Each outage is a record of the run (one down from the start too,
// down at 0). Its events are scheduled before any other (messages, storms,
// imports): each runs before every other event at its time, in one part
// and in every part of a partitioned run, which is what lets the parts
// agree on the frames a failure loses (fabric.Import). Keep it so.
func (s *Sim) scheduleFailures() error {
	fs, err := plan.Failures(s.Job.Spec, s.Topo)
	if err != nil {
		return err
	}
	conv := s.Job.Spec.Topology.Convergence
	for _, f := range fs {
		for _, o := range f.Outages() {
			down, up := o[0], o[1]
			rec := &metrics.LinkFailure{From: f.From, To: f.To, DownS: down.Seconds(), UpS: up.Seconds()}
			lf := &linkFailure{s: s, pt: f.Link, rec: rec}
			s.outages = append(s.outages, lf)
			if down > 0 {
				s.Sched.At(down, lf, 0)
				s.Sched.At(down+conv, lf, 1)
			}
			if up > 0 {
				s.Sched.At(up, lf, 2)
				s.Sched.At(up+conv, lf, 3)
			}
		}
	}
	plan.FailAtStart(s.Topo, fs)
	return nil
}
