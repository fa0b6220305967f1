// Package lab builds one Job (topology, switches, NICs, transport, workload)
// and runs it on the packet-level simulator, returning its measured result.
package lab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"fabriclab/fabric"
	"fabriclab/internal/inputfile"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/transport/roce"
	"fabriclab/workload"
)

// Progress receives the fraction of the job done (0..1), roughly.
type Progress func(frac float64)

// Sim is a built, ready-to-run simulation of one job. Tests use it to reach
// inside (the network, the transport) after a run.
type Sim struct {
	Job   scenario.Job
	Sched *sim.Scheduler
	Topo  *topo.Topology
	// RoCE is the RoCE transport when the scenario runs it (nil for the
	// others); tests reach inside it.
	RoCE *roce.Transport
	DAG  *workload.DAG
	tr   hostTransport

	// parts are the jobs in DAG: one for a scenario without jobs:.
	parts []part

	explain_ *explainer   // explain mode's observer (nil when off)
	routes   []topo.Route // switch.routes_file, re-applied after reconvergence

	conns []int32 // message → its connection (−1: a marker)
	// windowData is the data payload hosts had received halfway through
	// and at the end of a messages workload's arrival window (−1: not
	// measured).
	windowData [2]int64
	window     bool // the snapshots are scheduled
	// abandoned holds the messages a transport gave up on (Homa after
	// max_resends timeouts): they never complete.
	abandoned map[int32]bool
	dists     sizeDists // the messages workloads' size distributions, read once
	remaining []int32
	start     []sim.Time
	end       []sim.Time
	done      int
}

// part is one job's share of the DAG: messages [lo, hi) and the job's own
// DAG, whose metadata (collective, ranks, size, iterations relative to lo)
// its summary uses.
type part struct {
	index  int // job index: 0 = main, i = spec.Jobs[i-1]
	name   string
	kind   string
	lo, hi int32
	start  sim.Time
	dag    *workload.DAG
}

// Build assembles the simulation of job without running it: every job of
// its scenario (the workload and jobs:) together.
func Build(job scenario.Job) (*Sim, error) { return build(job, -1) }

// BuildAlone assembles the simulation of job i of job's scenario alone on
// the fabric (0 = the workload, i = jobs[i−1]), started at time 0.
func BuildAlone(job scenario.Job, i int) (*Sim, error) { return build(job, i) }

// Jobs is how many jobs job's scenario runs together.
func Jobs(job scenario.Job) int {
	if job.Spec == nil {
		return 1
	}
	return 1 + len(job.Spec.Jobs)
}

func build(job scenario.Job, only int) (*Sim, error) {
	spec := job.Spec
	if spec == nil {
		return nil, fmt.Errorf("job %s/%s has no scenario", job.Scenario, job.Variant)
	}
	ts := TopoSpec(spec)
	limit := int64(spec.Sim.MemoryLimit)
	if err := checkMemory(limit, routeBytes(ts), "the route tables"); err != nil {
		return nil, err
	}
	// Everything the build will hold, estimated before any of it is
	// allocated (a job the estimate cannot count fails below, in its own
	// words, before allocating).
	sel := selectJobs(job, only)
	dists := sizeDists{}
	est := estimateMemory(job, sel, dists)
	if err := est.Check(limit); err != nil {
		return nil, err
	}
	sc := sim.NewScheduler()
	tp, err := topo.Build(sc, job.Seed, ts)
	if err != nil {
		return nil, err
	}
	var dags []*workload.DAG
	var delays []sim.Time
	var parts []part
	for k, i := range sel {
		d, err := buildJobDAG(job, i, tp, dists, &est.Jobs[k].Counts)
		if err != nil {
			if len(sel) > 1 || i > 0 {
				return nil, fmt.Errorf("job %q: %w", scenario.JobName(spec, i), err)
			}
			return nil, err
		}
		var start sim.Time
		if i > 0 && only < 0 {
			start = spec.Jobs[i-1].Start
		}
		dags, delays = append(dags, d), append(delays, start)
		parts = append(parts, part{index: i, name: scenario.JobName(spec, i), kind: scenario.JobWorkload(spec, i).Kind, start: start, dag: d})
	}
	dag := dags[0]
	if len(dags) > 1 {
		var offs []int32
		dag, offs = workload.Combine(dags, delays)
		for k := range parts {
			parts[k].lo = offs[k]
		}
	}
	for k := range parts {
		parts[k].hi = parts[k].lo + int32(len(dags[k].Msgs))
	}
	s := &Sim{Job: job, Sched: sc, Topo: tp, DAG: dag, parts: parts, dists: dists}
	if s.tr, err = newTransport(s, tp.Net, s.delivered); err != nil {
		return nil, err
	}
	for h, id := range tp.ScaleUpEndpoint {
		s.tr.setName(id, fmt.Sprintf("host%d-scaleup", h))
	}
	if err := s.scheduleFailures(); err != nil {
		return nil, err
	}
	if err := s.loadRoutes(); err != nil {
		return nil, err
	}
	if err := s.applyRoutes(false); err != nil {
		return nil, err
	}
	if spec.Sim.Explain {
		s.explain_ = newExplainer(len(dag.Msgs))
		tp.Net.Observer = s.explain_
	}
	s.connect()
	s.windowData = [2]int64{-1, -1}
	if w := spec.Workload; w.Kind == "messages" && len(parts) == 1 {
		s.window = true
		s.Sched.At(w.Duration/2, (*windowEnd)(s), 0)
		s.Sched.At(w.Duration, (*windowEnd)(s), 1)
	}
	return s, nil
}

// windowEnd notes what the fabric had delivered halfway through (arg 0)
// and at the end (arg 1) of a messages workload's arrival window.
type windowEnd Sim

func (w *windowEnd) OnEvent(_ sim.Time, arg uint64) { w.windowData[arg] = w.Topo.Net.DeliveredData }

// TopoSpec converts the scenario's topology and switch sections.
func TopoSpec(spec *scenario.Scenario) topo.Spec {
	t, sw, nic := spec.Topology, spec.Switch, spec.NIC
	cfg := &fabric.SwitchConfig{
		Buffer:            int64(sw.Buffer),
		XOFF:              int64(sw.PFC.XOFF),
		XON:               int64(sw.PFC.XON),
		Headroom:          int64(sw.PFC.Headroom),
		ECN:               sw.ECN.Enabled,
		KMin:              int64(sw.ECN.KMin),
		KMax:              int64(sw.ECN.KMax),
		PMax:              sw.ECN.PMax,
		ECNRefRateBps:     int64(sw.ECN.ReferenceRate),
		MaxPacketWire:     int64(nic.MTU + nic.Overhead),
		ForwardingLatency: t.SwitchLatency,
		Policy:            fabric.Policies[sw.Forwarding],
		FlowletGap:        sw.FlowletGap,
		Polarized:         sw.ECMPPolarized,
	}
	if sw.PFC.Enabled {
		cfg.Lossless[nic.DataPriority] = true
	}
	var tiers map[string]fabric.Policy
	for _, tf := range sw.ForwardingTiers {
		if tiers == nil {
			tiers = map[string]fabric.Policy{}
		}
		tiers[tf.Tier] = fabric.Policies[tf.Forwarding]
	}
	return topo.Spec{
		TierPolicy: tiers,
		Kind:       t.Kind, Hosts: t.Hosts, HostsPerLeaf: t.HostsPerLeaf, Spines: t.Spines,
		Oversubscription: t.Oversubscription, K: t.K, Servers: t.Servers,
		GPUsPerServer: t.GPUsPerServer, ServersPerGroup: t.ServersPerGroup,
		HostLink:   topo.Link{Rate: t.HostLink.Rate, Delay: t.HostLink.Delay},
		FabricLink: topo.Link{Rate: t.FabricLink.Rate, Delay: t.FabricLink.Delay},
		ScaleUp:    topo.Link{Rate: t.ScaleUp.Rate, Delay: t.ScaleUp.Delay},
		Switch:     cfg,
		ECMPSeed:   sw.ECMPSeed,
	}
}

// buildJobDAG compiles job i of job's scenario (0 = the workload) at its
// size: the job's Size for the workload, the one size of an extra job.
// counts is the collective's workload.Count from the memory estimate (its
// zero value when the job is not a collective or was not counted).
func buildJobDAG(job scenario.Job, i int, tp *topo.Topology, dists sizeDists, counts *workload.Counts) (*workload.DAG, error) {
	w := scenario.JobWorkload(job.Spec, i)
	seed := scenario.JobSeed(job.Seed, i)
	hosts := tp.Hosts
	ranks := w.Ranks
	if ranks == 0 {
		ranks = hosts - w.HostOffset
	}
	size := jobSize(job, i)
	flowList := job.FlowList
	if i > 0 {
		flowList = nil
	}
	if workload.Algorithms(w.Kind) != nil {
		// The same placement validation computed (servers are consecutive
		// gpus_per_server hosts on every topology, as topo builds them).
		rankHost, err := scenario.JobHosts(w, job.Spec.Topology, seed)
		if err != nil {
			return nil, fmt.Errorf("workload.placement: %w", err)
		}
		rankServer := make([]int, ranks)
		rankRail := make([]int, ranks)
		for r, h := range rankHost {
			rankServer[r], rankRail[r] = tp.Server[h], tp.Rail[h]
		}
		ws := collectiveSpec(w, seed, size, ranks, rankHost, rankServer, rankRail)
		if counts != nil && counts.Copies > 0 {
			ws.Counts = counts
		}
		d, err := workload.Build(ws)
		if err != nil {
			return nil, err
		}
		for i := range d.Msgs {
			m := &d.Msgs[i]
			if m.Marker || tp.Server[m.Src] != tp.Server[m.Dst] {
				continue
			}
			if m.Src == m.Dst {
				return nil, fmt.Errorf("ranks %d and %d share host %d", m.SrcRank, m.DstRank, m.Src)
			}
			// Inside a server: over the scale-up domain when there is one,
			// else through the NICs and the leaf.
			if tp.ScaleUpEndpoint != nil {
				m.Src, m.Dst = int32(tp.ScaleUpEndpoint[m.Src]), int32(tp.ScaleUpEndpoint[m.Dst])
			}
		}
		return d, nil
	}
	switch w.Kind {
	case "permutation", "uniform":
		hs, err := scenario.JobHosts(w, job.Spec.Topology, seed)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			if h < 0 || h >= hosts {
				return nil, fmt.Errorf("host %d is not in the topology (hosts 0–%d)", h, hosts-1)
			}
		}
		if w.Kind == "permutation" {
			d, err := workload.Permutation(len(hs), size, sim.NewRNG(seed, "permutation"))
			if err != nil {
				return nil, err
			}
			mapHosts(d, hs)
			return d, nil
		}
		return workload.Uniform(hs, size, w.Load, job.Spec.Topology.HostLink.Rate, w.Duration,
			sim.NewRNG(seed, "uniform"), maxUniformMessages)
	case "incast":
		return workload.Incast(hosts, w.Senders, w.Target, size)
	case "messages":
		hs, err := scenario.JobHosts(w, job.Spec.Topology, seed)
		if err != nil {
			return nil, err
		}
		nic := job.Spec.NIC
		dist, err := dists.get(w.SizeDist, job.Dir)
		if err != nil {
			return nil, err
		}
		return workload.Messages(workload.MessagesSpec{Hosts: hs, Sizes: dist, Load: w.Load,
			Rate: job.Spec.Topology.HostLink.Rate, Payload: int64(nic.MTU), Header: int64(nic.Overhead),
			Duration: w.Duration, Pattern: w.Pattern, ResponseBytes: int64(w.ResponseSize), Seed: seed, Limit: maxUniformMessages})
	case "flows":
		flows := flowList
		if flows == nil {
			// A hand-made Job: read the file the scenario names.
			path := w.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(job.Dir, path)
			}
			f, err := inputfile.Open(path, inputfile.Limit)
			if err != nil {
				return nil, fmt.Errorf("workload.file: %w", err)
			}
			defer f.Close()
			if flows, err = workload.ParseFlowList(path, f); err != nil {
				return nil, err
			}
		}
		return workload.Flows(hosts, flows)
	}
	return nil, fmt.Errorf("unknown workload kind %q", w.Kind)
}

// maxUniformMessages bounds a uniform job (scenario validation says the
// same, with a location).
const maxUniformMessages = workload.MaxUniformMessages

// mapHosts moves a pattern built on hosts 0…n−1 to hosts hs.
func mapHosts(d *workload.DAG, hs []int) {
	for i := range d.Msgs {
		d.Msgs[i].Src = int32(hs[d.Msgs[i].Src])
		d.Msgs[i].Dst = int32(hs[d.Msgs[i].Dst])
	}
	d.RankHost = append([]int(nil), hs...)
}

// connect opens one connection per (src, dst, channel) — or, with TCP's
// pool policy, up to pool_size of them used round-robin — and arms the
// DAG's roots.
func (s *Sim) connect() {
	// Jobs never share a connection, even between the same hosts.
	type key = connKey
	connOf := make(map[key]int32)
	pool := int32(1)
	next := map[key]int32{} // per (part, src, dst, ch): the pool's next connection
	if tr := s.Job.Spec.Transport; (tr.Kind == "dctcp" || tr.Kind == "tcp") && tr.TCP.Connections == "pool" {
		pool = int32(max(tr.TCP.PoolSize, 1))
	}
	part := int32(0)
	d := s.DAG
	s.conns = make([]int32, len(d.Msgs))
	s.remaining = append([]int32(nil), d.DepCount...)
	s.start = make([]sim.Time, len(d.Msgs))
	s.end = make([]sim.Time, len(d.Msgs))
	for i := range s.end {
		s.start[i], s.end[i] = -1, -1
	}
	for i, m := range d.Msgs {
		for int(part) < len(s.parts)-1 && int32(i) >= s.parts[part].hi {
			part++
		}
		if m.Marker {
			s.conns[i] = -1
			continue // bookkeeping only: no connection, completes at once
		}
		k := key{part, m.Src, m.Dst, m.Channel, 0}
		if pool > 1 {
			base := k
			k.k = next[base]
			next[base] = (k.k + 1) % pool
		}
		c, ok := connOf[k]
		if !ok {
			c = int32(len(connOf))
			s.tr.connect(c, int(m.Src), int(m.Dst))
			connOf[k] = c
		}
		s.conns[i] = c
	}
	for i := range d.Msgs {
		if s.remaining[i] == 0 {
			s.release(int32(i))
		}
	}
}

// release starts message i now, or at its earliest start time.
func (s *Sim) release(i int32) {
	m := &s.DAG.Msgs[i]
	now := s.Sched.Now()
	if m.At > now {
		s.Sched.At(m.At, (*releaser)(s), uint64(i))
		return
	}
	s.start[i] = now
	if m.Marker {
		s.delivered(i, now)
		return
	}
	s.tr.post(s.conns[i], i, int(m.Src), int(m.Dst), m.Bytes)
}

type releaser Sim

func (r *releaser) OnEvent(_ sim.Time, arg uint64) { (*Sim)(r).release(int32(arg)) }

func (s *Sim) delivered(i int32, now sim.Time) {
	if s.end[i] >= 0 {
		return
	}
	s.end[i] = now
	s.done++
	for _, j := range s.DAG.Successors(i) {
		s.remaining[j]--
		if s.remaining[j] == 0 {
			s.release(j)
		}
	}
	if s.done == len(s.DAG.Msgs) {
		s.Sched.Stop()
	}
}

// abandon records that the transport gave up on message i.
func (s *Sim) abandon(i int32) {
	if s.end[i] >= 0 {
		return // delivered after all (the other side gave up late)
	}
	if s.abandoned == nil {
		s.abandoned = map[int32]bool{}
	}
	s.abandoned[i] = true
}

// sizeDists reads each size distribution of a build once (the workload
// draws from it, Homa derives its priorities from it).
type sizeDists map[string]*workload.SizeDist

func (m sizeDists) get(name, dir string) (*workload.SizeDist, error) {
	if d, ok := m[name]; ok {
		return d, nil
	}
	d, err := scenario.ResolveSizeDist(name, dir)
	if err != nil {
		return nil, fmt.Errorf("workload.size_dist: %w", err)
	}
	m[name] = d
	return d, nil
}

// stalled explains a run that ended with messages missing although it was
// neither stopped nor out of time: nothing was left to happen. Either the
// transport gave up on them (Homa's abandonment) or it lost track of them,
// a simulator bug, never the user's. Nil for any other run.
func (s *Sim) stalled(ctx context.Context) error {
	if s.Done() || ctx.Err() != nil || s.Sched.Pending() > 0 {
		return nil
	}
	if len(s.abandoned) > 0 {
		return fmt.Errorf("Homa abandoned %d messages after transport.homa.max_resends timeouts in a row; they never completed (raise max_resends or resend_timeout, or look for lost links)",
			len(s.abandoned))
	}
	return fmt.Errorf("the simulation stalled at %v: %d messages never completed and no event was left (a transport bug; please report it with the scenario)",
		s.Sched.Now(), len(s.DAG.Msgs)-s.done)
}

// Done reports whether every message was delivered.
func (s *Sim) Done() bool { return s.done == len(s.DAG.Msgs) }

// Run simulates until every message is delivered, the scenario's time limit
// passes, or ctx is cancelled.
func (s *Sim) Run(ctx context.Context, progress Progress) {
	var total int64
	for _, m := range s.DAG.Msgs {
		total += m.Bytes
	}
	s.Sched.StopPollEvery = 1 << 14
	s.Sched.StopHook = func(sim.Time) bool {
		if progress != nil && total > 0 {
			progress(float64(s.tr.deliveredPayload()) / float64(total))
		}
		return ctx.Err() != nil
	}
	s.Sched.Run(s.Job.Spec.Sim.TimeLimit)
}

// Run builds and simulates one job. Cancelling ctx stops the simulation
// early; the result then has Complete=false and holds what finished.
//
// A scenario with jobs: runs them all together, then each alone on the same
// fabric (one after the other) for its alone CCT and interference factor;
// progress covers the together run only for the first half.
func Run(ctx context.Context, job scenario.Job, progress Progress) (metrics.SizeResult, error) {
	wall := time.Now()
	s, err := Build(job)
	if err != nil {
		return metrics.SizeResult{SizeBytes: int64(job.Size), Error: err.Error()}, err
	}
	n := Jobs(job)
	scaled := progress
	if n > 1 && progress != nil {
		scaled = func(f float64) { progress(f / 2) }
	}
	s.Run(ctx, scaled)
	r := s.Result()
	if err := s.stalled(ctx); err != nil {
		r.Error = err.Error()
		return r, err
	}
	for i := 0; i < len(r.Jobs) && ctx.Err() == nil; i++ {
		a, err := BuildAlone(job, i)
		if err != nil {
			r.Error = err.Error()
			return r, err
		}
		a.Run(ctx, nil)
		if err := a.stalled(ctx); err != nil {
			r.Error = fmt.Sprintf("job %q alone: %v", a.parts[0].name, err)
			return r, errors.New(r.Error)
		}
		ar := a.summary(a.parts[0])
		r.Jobs[i].SetAlone(ar.CCTS, ar.Complete)
		if progress != nil {
			progress(0.5 + 0.5*float64(i+1)/float64(len(r.Jobs)))
		}
	}
	r.WallS = time.Since(wall).Seconds()
	if c := r.Conservation; !c.OK {
		// A simulator bug, never the user's: say so loudly.
		err := fmt.Errorf("byte conservation violated: injected %d ≠ delivered %d + dropped %d + in flight %d",
			c.InjectedBytes, c.DeliveredBytes, c.DroppedBytes, c.InFlightBytes)
		r.Error = err.Error()
		return r, err
	}
	if progress != nil {
		progress(1)
	}
	return r, nil
}

// linkFailure takes one link down (arg 0) and, after the convergence
// time, lets routing recompute around it (arg 1).
type linkFailure struct {
	s  *Sim
	pt *fabric.Port
}

func (f *linkFailure) OnEvent(_ sim.Time, arg uint64) {
	if arg == 0 {
		f.s.Topo.Net.FailLink(f.pt)
		return
	}
	topo.ComputeRoutes(f.s.Topo)
	// Pinned routes stay pinned where their link still works; one over the
	// failed link falls back to the computed routes. (A table that loops
	// only after the failure was validated at build and is left as the
	// subnet manager would leave it.)
	_ = f.s.applyRoutes(true)
}

// loadRoutes reads switch.routes_file (relative to the scenario).
func (s *Sim) loadRoutes() error {
	name := s.Job.Spec.Switch.RoutesFile
	if name == "" {
		return nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.Job.Dir, path)
	}
	f, err := inputfile.Open(path, inputfile.Limit)
	if err != nil {
		return fmt.Errorf("switch.routes_file: %w", err)
	}
	defer f.Close()
	s.routes, err = topo.ParseRoutes(name, f)
	return err
}

func (s *Sim) applyRoutes(skipDead bool) error {
	if len(s.routes) == 0 {
		return nil
	}
	return topo.ApplyRoutes(s.Topo, s.Job.Spec.Switch.RoutesFile, s.routes, skipDead)
}

// scheduleFailures resolves topology.failures to links: those at time 0
// are down from the start (routes avoid them), the others fail mid-run and
// routes converge topology.convergence later.
func (s *Sim) scheduleFailures() error {
	t := s.Job.Spec.Topology
	atStart := false
	for i, f := range t.Failures {
		pt := s.Topo.Link(f.From, f.To)
		if pt == nil {
			pt = s.Topo.Link(f.To, f.From) // written host first
		}
		if pt == nil {
			return fmt.Errorf("topology.failures[%d]: there is no link between %q and %q", i, f.From, f.To)
		}
		if _, ok := pt.Peer.Owner.(*fabric.Switch); !ok {
			return fmt.Errorf("topology.failures[%d]: %q–%q is a host link; only links between switches can fail", i, f.From, f.To)
		}
		lf := &linkFailure{s: s, pt: pt}
		if f.At == 0 {
			s.Topo.Net.FailLink(pt)
			atStart = true
			continue
		}
		s.Sched.At(f.At, lf, 0)
		s.Sched.At(f.At+t.Convergence, lf, 1)
	}
	if atStart {
		topo.ComputeRoutes(s.Topo)
	}
	return nil
}
