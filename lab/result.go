package lab

import (
	"fabriclab/fabric"
	"fabriclab/flow"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/units"
	"fabriclab/workload"
)

// Result summarizes the simulation as it stands (complete or not). With
// several jobs the row is the main job's summary, with the whole fabric's
// counters, and Jobs holds every job's (alone CCTs are filled by Run).
func (s *Sim) Result() metrics.SizeResult {
	now := s.Sched.Now()
	r := s.summary(s.parts[0])
	r.Events = s.Sched.Executed
	r.SimEndS = now.Seconds()
	if len(s.parts) > 1 {
		for _, p := range s.parts {
			pr := r
			if p.index != s.parts[0].index {
				pr = s.summary(p)
			}
			r.Jobs = append(r.Jobs, metrics.Job(p.name, p.kind, p.start.Seconds(), pr))
		}
		if !s.Done() {
			// The run as a whole did not finish (another job hit the time
			// limit): the row is incomplete, without rates.
			r.Complete = false
			r.AlgBWGBps, r.BusBWGBps, r.IdealPct, r.RoutedIdealPct, r.CollectiveIdealPct = 0, 0, 0, 0, 0
		}
	}
	// Counters: every port, then every NIC's transport counters. A host's
	// entry in the per-port list carries its NIC's counters too.
	nicOf := make(map[*fabric.Port]int, len(s.Topo.Net.HostPorts))
	for h, pt := range s.Topo.Net.HostPorts {
		nicOf[pt] = h
	}
	for _, pt := range s.Topo.Net.Ports {
		c := pt.Counters(now)
		r.Totals.Add(c)
		if !s.Job.Spec.Sim.PortCounters {
			continue
		}
		if h, ok := nicOf[pt]; ok {
			c.Add(s.tr.nicCounters(h))
		}
		if c.TxPackets > 0 || c.PFCPausesRecv > 0 || c.Drops > 0 {
			node, peer := fabric.PortName(pt)
			r.Ports = append(r.Ports, metrics.PortCounters{Node: node, Peer: peer, Tier: pt.Tier, Counters: c})
		}
	}
	r.Totals.Add(s.tr.counters())
	r.Totals.UtilizationPct = 0
	r.PFCPauses = r.Totals.PFCPausesSent
	r.ECNMarks = r.Totals.ECNMarks
	r.Drops = r.Totals.Drops
	r.Retransmits = r.Totals.Retransmits
	r.CNPs = r.Totals.CNPs
	r.Timeouts = r.Totals.Timeouts
	r.Conservation = s.Topo.Net.Balance()
	return r
}

// done reports whether every message of p was delivered.
func (s *Sim) partDone(p part) bool {
	if s.Done() {
		return true
	}
	for i := p.lo; i < p.hi; i++ {
		if s.end[i] < 0 {
			return false
		}
	}
	return true
}

// summary is the flow-level summary of one job's messages: CCT (or the
// mean of its measured iterations), flows, FCT and slowdown distributions,
// per-rank figures, the ideals, and the rates derived from them.
func (s *Sim) summary(p part) metrics.SizeResult {
	d := p.dag
	now := s.Sched.Now()
	r := metrics.SizeResult{
		SizeBytes: d.Size,
		Ranks:     d.Ranks,
		Algorithm: d.Algorithm,
		Complete:  s.partDone(p),
	}
	first, last := sim.Time(-1), sim.Time(0)
	n := int(p.hi - p.lo)
	fcts := make([]float64, 0, n)
	slows := make([]float64, 0, n)
	var bSizes []int64 // sizes and slowdowns of the finished messages for the size buckets
	var bSlows []float64
	rankDone := make([]sim.Time, d.Ranks)
	record := s.Job.Spec.Sim.RecordFlows
	var delivered int64
	var slowByMsg map[int]float64
	if s.explain_ != nil {
		slowByMsg = map[int]float64{}
	}
	hostOf := func(id int32) (int, bool) { // a scale-up endpoint's host
		if int(id) >= s.Topo.Hosts {
			return int(id) - s.Topo.Hosts, true
		}
		return int(id), false
	}
	for i := int(p.lo); i < int(p.hi); i++ {
		m := s.DAG.Msgs[i]
		st, en := s.start[i], s.end[i]
		if st >= 0 && (first < 0 || st < first) {
			first = st
		}
		if en > last {
			last = en
		}
		if m.Marker || (d.Iteration != nil && d.Iteration[i-int(p.lo)] < 0) {
			continue // bookkeeping, or a warmup iteration: not a measured flow
		}
		r.Flows++
		src, su := hostOf(m.Src)
		dst, _ := hostOf(m.Dst)
		if en < 0 {
			if record {
				r.Records = append(r.Records, metrics.FlowRecord{ID: i, Src: src, Dst: dst, ScaleUp: su,
					SrcRank: int(m.SrcRank), DstRank: int(m.DstRank), Bytes: m.Bytes, StartS: st.Seconds(), EndS: -1})
			}
			continue
		}
		delivered += m.Bytes
		if int(m.DstRank) < len(rankDone) && en > rankDone[m.DstRank] {
			rankDone[m.DstRank] = en
		}
		fct := (en - st).Seconds()
		ideal := s.AloneFCT(int(m.Src), int(m.Dst), m.Bytes).Seconds()
		slow := fct / ideal
		if slowByMsg != nil {
			slowByMsg[i] = slow
		}
		fcts = append(fcts, fct)
		slows = append(slows, slow)
		if d.Collective != metrics.Messages || s.DAG.DepCount[i] == 0 {
			// The size buckets are the messages' or RPC requests' (a
			// response's round trip is measured instead).
			bSizes, bSlows = append(bSizes, m.Bytes), append(bSlows, slow)
		}
		if record {
			r.Records = append(r.Records, metrics.FlowRecord{ID: i, Src: src, Dst: dst, ScaleUp: su,
				SrcRank: int(m.SrcRank), DstRank: int(m.DstRank), Bytes: m.Bytes, StartS: st.Seconds(),
				EndS: en.Seconds(), FCTS: fct, IdealS: ideal, Slowdown: slow, Done: true})
		}
	}
	if first < 0 {
		first = 0
	}
	if !r.Complete {
		last = now
	}
	r.CCTS = (last - first).Seconds()
	// With iterations, CCT is the measured iterations' total time divided by
	// their number, as nccl-tests reports it (pipelined iterations overlap,
	// so this is less than the mean of their own spans, which
	// iteration_cct_s summarizes).
	if its, total := s.iterationTimes(p); len(its) > 0 {
		r.IterationsS = its
		r.Iterations = len(its)
		r.IterCCT = metrics.Summarize(append([]float64(nil), its...))
		if r.Complete {
			r.CCTS = total / float64(len(its))
		}
	}
	r.FCT = metrics.Summarize(fcts) // sorts fcts
	r.FCTCurveS = metrics.Curve(fcts, 200, record)
	if record || d.Ranks <= 128 {
		r.RankBWGBps = s.rankBandwidth(p)
	}
	switch d.Collective {
	case metrics.Messages, metrics.Uniform, metrics.FlowList:
		w := scenario.JobWorkload(s.Job.Spec, p.index)
		r.SlowdownBySize = metrics.SlowdownBuckets(bSizes, bSlows, w.Buckets, w.BucketCount)
		if d.Collective == metrics.Messages {
			r.Load = s.messageLoad(p, w, last)
		}
	}
	r.Slowdown = metrics.Summarize(slows) // sorts slows
	if s.explain_ != nil {
		r.Explain = s.explain(p, slowByMsg)
	}
	r.RankDoneS = make([]float64, len(rankDone))
	for i, t := range rankDone {
		r.RankDoneS[i] = t.Seconds()
	}
	copies := float64(max(len(d.Iters), 1))
	r.IdealS = s.idealTime(p.lo, p.hi).Seconds() / copies
	r.RoutedIdealS = r.IdealS
	if staticRouting(s.Job.Spec) {
		// Paths follow from the 5-tuple alone: bound the busiest one.
		r.RoutedIdealS = s.routedIdealTime(p.lo, p.hi).Seconds() / copies
	}
	r.CollectiveIdealS = s.collectiveIdeal(p).Seconds()
	r.Finish(d.Collective)
	if (d.Collective == metrics.Uniform || d.Collective == metrics.Messages) && r.Complete && r.CCTS > 0 {
		r.AlgBWGBps = float64(delivered) / r.CCTS / 1e9 // aggregate throughput
	}
	return r
}

// messageLoad is what a messages job offered and carried: payload per
// sending host over the arrival window, and over the run up to its last
// delivery (see metrics.MessageLoad).
func (s *Sim) messageLoad(p part, w scenario.Workload, last sim.Time) *metrics.MessageLoad {
	spec := s.Job.Spec
	ld := &metrics.MessageLoad{SizeDist: w.SizeDist, TargetLoad: w.Load, DurationS: w.Duration.Seconds(), Hosts: p.dag.Ranks}
	var payload, wire, done, late int64
	mtu, ovh := int64(spec.NIC.MTU), int64(spec.NIC.Overhead)
	complete := true
	half := w.Duration / 2
	var rtts []float64
	for i := p.lo; i < p.hi; i++ {
		if s.DAG.DepCount[i] > 0 {
			continue // a response: counted with its request
		}
		// A message, or a request and its response (offered at the
		// request's arrival: the fabric has to carry both).
		group := append([]int32{i}, s.DAG.Successors(i)...)
		for _, j := range group {
			m := &s.DAG.Msgs[j]
			ld.Messages++
			payload += m.Bytes
			if s.DAG.Msgs[i].At-p.start >= half {
				late += m.Bytes
			}
			wire += workload.WireBytes(m.Bytes, mtu, ovh)
			if s.end[j] >= 0 {
				done += m.Bytes
			} else {
				complete = false
			}
		}
		if len(group) > 1 {
			ld.RPCs++
			if resp := group[1]; s.end[resp] >= 0 {
				rtts = append(rtts, (s.end[resp] - s.start[i]).Seconds())
			}
		}
	}
	if ld.Messages > 0 {
		ld.MeanBytes = float64(payload) / float64(ld.Messages)
	}
	if w.ResponseSize > 0 {
		rtt := metrics.Summarize(rtts)
		ld.RTT = &rtt
	}
	hosts := float64(max(ld.Hosts, 1))
	if ld.DurationS > 0 {
		ld.OfferedGbps = float64(payload) * 8 / ld.DurationS / hosts / 1e9
		ld.OfferedLoad = float64(wire) * 8 / ld.DurationS / hosts / float64(spec.Topology.HostLink.Rate)
	}
	span := (last - p.start).Seconds()
	win := s.windowData
	if s.window && s.Done() {
		// The run ended before a snapshot was due: nothing was delivered
		// after the end, so the end's figure stands for it.
		for k := range win {
			if win[k] < 0 {
				win[k] = s.Topo.Net.DeliveredData
			}
		}
	}
	switch {
	case win[0] >= 0 && win[1] >= 0 && half > 0:
		// Steady state: what hosts received in the window's second half,
		// packet by packet, against what arrived in it (the first half
		// fills the network).
		ld.ThroughputGbps = float64(win[1]-win[0]) * 8 / half.Seconds() / hosts / 1e9
		ld.OfferedGbps = float64(late) * 8 / half.Seconds() / hosts / 1e9
	case span > 0:
		// Several jobs share the fabric: this job's completed messages
		// over its whole run.
		ld.ThroughputGbps = float64(done) * 8 / span / hosts / 1e9
	}
	ld.DrainS = max(span-ld.DurationS, 0)
	// Carried: all delivered, at the rate offered, without a backlog that
	// takes longer than the window itself to drain.
	ld.Carried = complete && ld.ThroughputGbps >= 0.9*ld.OfferedGbps && ld.DrainS <= ld.DurationS
	return ld
}

// path returns the ports a packet from src to dst crosses (first ECMP
// choice at each switch: on a symmetric fabric every choice is as long).
func (s *Sim) path(src, dst int) []*fabric.Port {
	pt := s.Topo.Net.HostPorts[src]
	ports := []*fabric.Port{pt}
	for i := 0; i < 64; i++ {
		sw, ok := pt.Peer.Owner.(*fabric.Switch)
		if !ok {
			break
		}
		g := sw.Next[dst]
		if len(g) == 0 {
			break
		}
		pt = g[0]
		ports = append(ports, pt)
	}
	return ports
}

// AloneFCT is the completion time of a message of bytes from src to dst on
// the idle fabric: every packet serialized at the path's slowest link, the
// last packet's store-and-forward on every other hop, and the propagation
// (plus switch latency) of every hop.
func (s *Sim) AloneFCT(src, dst int, bytes int64) sim.Time {
	cfg := s.Job.Spec.NIC
	mtu, ovh := int64(cfg.MTU), int64(cfg.Overhead)
	n := max((bytes+mtu-1)/mtu, 1)
	lastWire := bytes - (n-1)*mtu + ovh
	wire := bytes + n*ovh
	ports := s.path(src, dst)
	b := 0
	for i, pt := range ports {
		if pt.Rate < ports[b].Rate {
			b = i
		}
	}
	t := units.SerializationTime(units.Size(wire), ports[b].Rate)
	for i, pt := range ports {
		t += pt.Delay
		if i != b {
			t += pt.TxTime(int32(lastWire))
		}
	}
	return t
}

// IdealTime is the payload the workload forces through the most loaded
// link divided by that link's rate: each host's NIC (send and receive), and
// each edge switch's uplinks taken together (traffic leaving or entering
// the edge). On a non-blocking fabric this is the NIC bound. Messages with
// a late earliest start add their start to their own serialization.
func (s *Sim) IdealTime() sim.Time { return s.idealTime(s.parts[0].lo, s.parts[0].hi) }

// idealTime is IdealTime over messages [lo, hi).
func (s *Sim) idealTime(lo, hi int32) sim.Time {
	msgs := s.DAG.Msgs[lo:hi]
	tp := s.Topo
	ids := len(tp.Net.HostPorts) // NICs, then scale-up endpoints
	tx := make([]int64, ids)
	rx := make([]int64, ids)
	up := map[*fabric.Switch]int64{}
	down := map[*fabric.Switch]int64{}
	for _, m := range msgs {
		tx[m.Src] += m.Bytes
		rx[m.Dst] += m.Bytes
		if es, ed := tp.Edge[m.Src], tp.Edge[m.Dst]; es != ed {
			up[es] += m.Bytes
			down[ed] += m.Bytes
		}
	}
	var worst sim.Time
	consider := func(bytes int64, rate units.Rate) {
		if bytes > 0 && rate > 0 {
			if t := units.SerializationTime(units.Size(bytes), rate); t > worst {
				worst = t
			}
		}
	}
	for h := 0; h < ids; h++ {
		r := tp.Net.HostPorts[h].Rate
		consider(tx[h], r)
		consider(rx[h], r)
	}
	// A message that may not start before At cannot end before At plus its
	// own serialization (replayed flow lists start flows late); CCT counts
	// from the earliest start, so the bound does too.
	var first sim.Time = -1
	for _, m := range msgs {
		if !m.Marker && (first < 0 || m.At < first) {
			first = m.At
		}
	}
	for _, m := range msgs {
		if m.At > first && !m.Marker {
			r := min(tp.Net.HostPorts[m.Src].Rate, tp.Net.HostPorts[m.Dst].Rate)
			if t := m.At - first + units.SerializationTime(units.Size(m.Bytes), r); t > worst {
				worst = t
			}
		}
	}
	for _, sw := range tp.Net.Switches {
		var cap units.Rate
		for _, pt := range sw.Ports {
			if _, ok := pt.Peer.Owner.(*fabric.Switch); ok {
				cap += pt.Rate
			}
		}
		consider(up[sw], cap)
		consider(down[sw], cap)
	}
	return worst
}

// RoutedIdealTime is the most loaded link's payload divided by its rate,
// with every message placed on the path its QP's 5-tuple really hashes to.
// It is at least IdealTime; equal on a fabric where routing spreads load
// perfectly.
func (s *Sim) RoutedIdealTime() sim.Time {
	return s.routedIdealTime(s.parts[0].lo, s.parts[0].hi)
}

// tuple is the 5-tuple message i's packets carry.
func (s *Sim) tuple(i int) (src, dst, sqp, dqp int32) {
	m := &s.DAG.Msgs[i]
	return s.tr.tuple(s.conns[i], int32(i), int(m.Src), int(m.Dst))
}

// Path implements flow.Pather: message i's static path, checked for loops
// and wrong deliveries.
func (s *Sim) Path(i int) ([]*fabric.Port, error) {
	src, dst, sqp, dqp := s.tuple(i)
	return flow.StaticPath(s.Topo.Net, src, dst, sqp, dqp)
}

// Conn implements flow.Pather: (source host, source QP), unique per
// connection.
func (s *Sim) Conn(i int) uint64 {
	src, _, sqp, _ := s.tuple(i)
	return uint64(uint32(src))<<32 | uint64(uint32(sqp))
}

// FlowPath is the ports message i crosses (its sender's NIC port first)
// under the switches' static routing: the ECMP hash of its QP's 5-tuple at
// every switch, or d-mod-k. Dynamic policies are followed as ECMP would be.
// Nil for a marker.
func (s *Sim) FlowPath(i int) []*fabric.Port {
	if s.DAG.Msgs[i].Marker {
		return nil
	}
	src, dst, sqp, dqp := s.tuple(i)
	pt := s.Topo.Net.HostPorts[src]
	var path []*fabric.Port
	for hop := 0; pt != nil && hop < 64; hop++ {
		path = append(path, pt)
		sw, ok := pt.Peer.Owner.(*fabric.Switch)
		if !ok {
			break
		}
		pt = sw.NextHop(src, dst, sqp, dqp)
	}
	return path
}

func (s *Sim) routedIdealTime(lo, hi int32) sim.Time {
	load := make(map[*fabric.Port]int64)
	for i := lo; i < hi; i++ {
		for _, pt := range s.FlowPath(int(i)) {
			load[pt] += s.DAG.Msgs[i].Bytes
		}
	}
	var worst sim.Time
	for pt, b := range load {
		if t := units.SerializationTime(units.Size(b), pt.Rate); t > worst {
			worst = t
		}
	}
	if it := s.idealTime(lo, hi); it > worst {
		worst = it
	}
	return worst
}

// iterationTimes is the span of every measured iteration that finished
// (first start to last delivery; nil when the DAG is a single copy) and the
// span of all of them together (consecutive iterations may overlap, as
// launches on one stream do).
func (s *Sim) iterationTimes(p part) (spans []float64, total float64) {
	measuredFirst, measuredLast := sim.Time(-1), sim.Time(-1)
	for _, it := range p.dag.Iters {
		if it.Index < 0 || len(p.dag.Iters) == 1 {
			continue
		}
		first, last := sim.Time(-1), sim.Time(-1)
		done := true
		for i := p.lo + it.Start; i < p.lo+it.End; i++ {
			st, en := s.start[i], s.end[i]
			if st >= 0 && (first < 0 || st < first) {
				first = st
			}
			if en < 0 {
				done = false
				break
			}
			last = max(last, en)
		}
		if done && first >= 0 {
			spans = append(spans, (last - first).Seconds())
			if measuredFirst < 0 {
				measuredFirst = first
			}
			measuredLast = max(measuredLast, last)
		}
	}
	if measuredFirst >= 0 {
		total = (measuredLast - measuredFirst).Seconds()
	}
	return spans, total
}

// CollectiveIdeal is the algorithm-independent bound of a collective: the
// time at which its bus bandwidth would equal the slowest participating
// NIC's rate (factor × S / rate). Traffic patterns have no such formula:
// their IdealTime is used.
func (s *Sim) CollectiveIdeal() sim.Time { return s.collectiveIdeal(s.parts[0]) }

func (s *Sim) collectiveIdeal(p part) sim.Time {
	d := p.dag
	f := metrics.BusBWFactor(d.Collective, d.Ranks)
	if !isCollective(d.Collective) || f == 0 {
		return s.idealTime(p.lo, p.hi) / sim.Time(max(len(d.Iters), 1))
	}
	var rate units.Rate
	for _, h := range d.RankHost {
		if r := s.Topo.Net.HostPorts[h].Rate; rate == 0 || r < rate {
			rate = r
		}
	}
	bytes := units.Size(f * float64(d.Size))
	return units.SerializationTime(bytes, rate)
}

// isCollective reports whether c is one of the collective catalogue (the
// traffic patterns have no algorithm-independent bound).
func isCollective(c metrics.Collective) bool { return workload.Algorithms(string(c)) != nil }

// rankBandwidth is the achieved bandwidth matrix between ranks.
func (s *Sim) rankBandwidth(p part) [][]float64 {
	n := p.dag.Ranks
	bytes := make([]int64, n*n)
	first := make([]sim.Time, n*n)
	last := make([]sim.Time, n*n)
	for i := range first {
		first[i] = -1
	}
	for i := p.lo; i < p.hi; i++ {
		m := s.DAG.Msgs[i]
		warmup := p.dag.Iteration != nil && p.dag.Iteration[i-p.lo] < 0
		if m.Marker || warmup || s.end[i] < 0 || int(m.SrcRank) >= n || int(m.DstRank) >= n {
			continue
		}
		k := int(m.SrcRank)*n + int(m.DstRank)
		bytes[k] += m.Bytes
		if first[k] < 0 || s.start[i] < first[k] {
			first[k] = s.start[i]
		}
		last[k] = max(last[k], s.end[i])
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			k := i*n + j
			if span := (last[k] - first[k]).Seconds(); bytes[k] > 0 && span > 0 {
				out[i][j] = float64(bytes[k]) / span / 1e9
			}
		}
	}
	return out
}

// staticRouting reports whether every switch's path choice follows from
// the 5-tuple alone (so paths can be worked out without simulating).
func staticRouting(spec *scenario.Scenario) bool {
	if !fabric.Policies[spec.Switch.Forwarding].Static() {
		return false
	}
	for _, tf := range spec.Switch.ForwardingTiers {
		if !fabric.Policies[tf.Forwarding].Static() {
			return false
		}
	}
	return true
}
