package lab

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
)

// telemetry is sim.telemetry's sampler: one event per interval snapshots
// every port of the fabric into flat arrays (sample k of port p at
// k·P + p), and at the end of the run the busiest ports' series (or the
// ports named) are cut out of them. It records every port cheaply and
// selects at the end, so ranking ports needs no second run; what it costs
// is one event and a pass over the ports per interval, and about 29 bytes
// per port-sample plus 4 per priority sampled on its own. When the samples reach scenario.MaxTelemetrySamples
// they are merged pairwise and the interval doubles, so a run of any
// length fits.
//
// Flows are followed only when named: the transport is asked for their
// state once per interval (flowprobe.go). The slowest flows are known only
// after the run, so "top N" flows run the job twice (Engine.Run).
type telemetry struct {
	s      *Sim
	ports  []*fabric.Port
	every  sim.Time
	keep   int   // the busiest ports kept (0 with named ports)
	named  []int // the ports named, in the order given
	prio   uint8
	most   int      // samples that fit scenario.MaxTelemetrySamples (even)
	n      int      // samples held (the last may be partly filled: sub)
	halved int      // times the samples were merged
	sub    int      // of the last sample's 2^halved intervals, how many are in (0: none yet)
	at     sim.Time // when the last sample was taken
	span   sim.Time // after finish: the time the last sample spans
	ended  bool     // finish has taken the run's closing sample
	spec   scenario.Telemetry

	queue  []int64 // bytes queued, all priorities
	prios  []uint8 // the priorities sampled on their own
	qprio  []int32 // bytes queued per sampled priority: sample k, port p, prio j at (k·P + p)·len(prios) + j
	sent   []int64 // wire bytes sent in the interval
	paused []bool  // the data priority paused by the peer
	frames []int32 // pause frames received in the interval
	marks  []int32 // ECN marks in the interval
	drops  []int32 // drops in the interval
	last   []portCounts

	flows  []*flowSeries // the followed flows (sim.telemetry.flows)
	metric string

	// parts are a partitioned run's parts, in part 0's sampler (nil
	// otherwise): a followed flow is read where its sender and its
	// receiver run (flowParts). The run drives every part's sampler
	// between its windows (partition.go) instead of events, and each
	// samples the ports it owns (ids: their IDs).
	parts []*Sim
	ids   []int
}

// portCounts are a port's running counters at the last sample.
type portCounts struct{ tx, frames, marks, drops int64 }

// flowSeries is one followed flow's samples from sample first on.
type flowSeries struct {
	msg       int32
	first     int
	value     []float64
	delivered []int64
	weight    []int32 // the sampling moments each value is the mean of
	ended     bool    // sampled once after its end: complete
}

// newTelemetry is the sampler of the spec's sim.telemetry for the
// fabric's ports, or nil (with no error) when telemetry is off.
func newTelemetry(s *Sim) (*telemetry, error) {
	spec := s.Job.Spec
	o := spec.Sim.Telemetry
	if !o.On() {
		return nil, nil
	}
	ports := s.Topo.Net.Ports
	if err := scenario.CheckTelemetry(spec.Sim, len(ports)); err != nil {
		return nil, err
	}
	if o.Ports.IsZero() {
		ports = nil // flows only: no port is sampled
	}
	// The bound: MaxTelemetrySamples port-samples, or as many samples of
	// the most flows.
	most := scenario.MaxTelemetrySamples / max(len(ports), scenario.MaxTelemetryFlows) &^ 1
	t := &telemetry{s: s, ports: ports, every: o.Every(), keep: o.Ports.Top, spec: o,
		prio: uint8(spec.NIC.DataPriority), most: most}
	t.prios = sampledPrios(spec)
	if spec.Sim.Partitions <= 1 {
		t.alloc() // a part's, once it knows its ports (own)
	}
	return t, nil
}

// alloc makes room for the first samples of the ports (up to the time
// limit, at most 64): the arrays grow as the run goes on.
func (t *telemetry) alloc() {
	c := len(t.ports) * int(min(t.spec.Samples(t.s.Job.Spec.Sim.TimeLimit), int64(t.most), 64))
	t.queue, t.sent = make([]int64, 0, c), make([]int64, 0, c)
	t.paused = make([]bool, 0, c)
	t.frames, t.marks, t.drops = make([]int32, 0, c), make([]int32, 0, c), make([]int32, 0, c)
	t.qprio = make([]int32, 0, c*len(t.prios))
	t.last = make([]portCounts, len(t.ports))
}

// own keeps part k's ports alone, in a partitioned run (ids[j] is the
// j-th kept port's ID): a port's series is its owner's (mergeTelemetry),
// and the other parts' copies of it would only take memory. The bound
// on samples stays the whole fabric's, the same in every part.
func (t *telemetry) own(partOf []int, k int) {
	if k > 0 {
		// Part 0's sampler follows the flows, in every part (flowParts);
		// the transports' watches stay, for the sender's part to note
		// where each followed message starts.
		t.flows = nil
	}
	if t.ports == nil {
		return // flows only
	}
	var kept []*fabric.Port
	for _, pt := range t.ports {
		if partOf[pt.ID] == k {
			kept = append(kept, pt)
			t.ids = append(t.ids, pt.ID)
		}
	}
	t.ports = kept
	t.alloc()
}

// sampledPrios are the priorities whose queues are sampled on their own:
// the data and control priorities, or all eight under Homa, which spreads
// its messages over them.
func sampledPrios(spec *scenario.Scenario) []uint8 {
	if scenario.TransportOf(spec).Name == "homa" {
		all := make([]uint8, fabric.NumPrio)
		for i := range all {
			all[i] = uint8(i)
		}
		return all
	}
	d, c := uint8(spec.NIC.DataPriority), uint8(spec.NIC.ControlPriority)
	if d == c {
		return []uint8{d}
	}
	return []uint8{min(d, c), max(d, c)}
}

// bind resolves the ports named, once the transport has named the hosts.
func (t *telemetry) bind() error {
	o := t.spec
	if len(o.Ports.List) == 0 {
		return nil
	}
	ports := t.ports
	byName := make(map[[2]string]int, len(ports))
	for p, pt := range ports {
		node, peer := fabric.PortName(pt)
		byName[[2]string{node, peer}] = p
	}
	for i, name := range o.Ports.List {
		node, peer, _ := scenario.PortPair(name)
		p, ok := byName[[2]string{node, peer}]
		if !ok {
			return fmt.Errorf("sim.telemetry.ports[%d]: the fabric has no port %.80s (a port is an egress port of switch node toward peer, or host node's NIC toward its switch, e.g. %s)", i, node+"->"+peer, examplePort(ports))
		}
		t.named = append(t.named, p)
	}
	return nil
}

// examplePort names one port of the fabric as sim.telemetry.ports takes it.
func examplePort(ports []*fabric.Port) string {
	for _, pt := range ports {
		if pt.Sw() != nil {
			node, peer := fabric.PortName(pt)
			return node + "->" + peer
		}
	}
	return "host0->leaf0"
}

// follow sets the flows to sample: msgs are message IDs of the plan's
// DAG (the flow records' IDs), checked here.
func (t *telemetry) follow(msgs []int32) error {
	d := t.s.DAG
	for i, m := range msgs {
		if int(m) >= len(d.Msgs) || m < 0 {
			return fmt.Errorf("sim.telemetry.flows[%d]: there is no flow %d (this job's flows are 0 to %d: the id of sim.record_flows' records)", i, m, len(d.Msgs)-1)
		}
		if d.Msgs[m].Marker {
			return fmt.Errorf("sim.telemetry.flows[%d]: %d is a marker of the collective's schedule, not a flow (pick an id from sim.record_flows' records)", i, m)
		}
	}
	t.metric = t.s.tr.watchFlows(msgs)
	for _, m := range msgs {
		t.flows = append(t.flows, &flowSeries{msg: m, first: -1})
	}
	return nil
}

// flowIDs are the flows sim.telemetry.flows names (none for "top N").
func flowIDs(o scenario.Telemetry) []int32 {
	var ids []int32
	for _, s := range o.Flows.List {
		n, _ := strconv.Atoi(s) // validated
		ids = append(ids, int32(min(n, math.MaxInt32)))
	}
	return ids
}

// start schedules the first sample.
func (t *telemetry) start() { t.next(t.s.Sched.Now()) }

// next schedules the sample an interval after now, a background event.
func (t *telemetry) next(now sim.Time) {
	t.s.Sched.Background++
	t.s.Sched.At(now+t.every, t, 0)
}

// OnEvent takes a sample and schedules the next while the run goes on:
// while messages remain and something else is left to happen (a sampler
// alone never keeps a finished or stalled run alive).
func (t *telemetry) OnEvent(now sim.Time, _ uint64) {
	t.s.Sched.Background--
	t.take(now)
	if !t.s.Done() && t.s.Sched.Foreground() > 0 {
		t.next(now)
	}
}

// take takes the sample due at now, merging the samples pairwise once
// they fill the bound.
func (t *telemetry) take(now sim.Time) {
	t.sample()
	t.at = now
	if t.n >= t.most && t.sub == 0 {
		t.decimate()
	}
}

// sample takes one snapshot of every port and followed flow, every
// interval: a new sample, or (after merges) folded into the last one,
// which spans 2^halved intervals.
func (t *telemetry) sample() {
	np := len(t.ports)
	k := len(t.queue)
	if t.sub == 0 {
		t.queue = slices.Grow(t.queue, np)[:k+np]
		t.sent = slices.Grow(t.sent, np)[:k+np]
		t.paused = slices.Grow(t.paused, np)[:k+np]
		t.frames = slices.Grow(t.frames, np)[:k+np]
		t.marks = slices.Grow(t.marks, np)[:k+np]
		t.drops = slices.Grow(t.drops, np)[:k+np]
		clear(t.queue[k:])
		clear(t.sent[k:])
		clear(t.paused[k:])
		clear(t.frames[k:])
		clear(t.marks[k:])
		clear(t.drops[k:])
		j := len(t.qprio)
		t.qprio = slices.Grow(t.qprio, np*len(t.prios))[:j+np*len(t.prios)]
		clear(t.qprio[j:])
		t.n++
	} else {
		k -= np
	}
	qp := t.qprio[k*len(t.prios):]
	q, sent, paused := t.queue[k:], t.sent[k:], t.paused[k:]
	frames, marks, drops := t.frames[k:], t.marks[k:], t.drops[k:]
	for p, pt := range t.ports {
		l := &t.last[p]
		c := &pt.C
		q[p] = max(q[p], pt.QueueBytes())
		for j, pr := range t.prios {
			i := p*len(t.prios) + j
			qp[i] = max(qp[i], int32(min(pt.PrioBytes(pr), math.MaxInt32)))
		}
		paused[p] = paused[p] || pt.Paused(t.prio)
		sent[p] += pt.TxBytes() - l.tx
		frames[p] = int32(min(int64(frames[p])+c.PFCPausesRecv-l.frames, math.MaxInt32))
		marks[p] = int32(min(int64(marks[p])+c.ECNMarks-l.marks, math.MaxInt32))
		drops[p] = int32(min(int64(drops[p])+c.Drops-l.drops, math.MaxInt32))
		*l = portCounts{pt.TxBytes(), c.PFCPausesRecv, c.ECNMarks, c.Drops}
	}
	for _, f := range t.flows {
		t.sampleFlow(f)
	}
	if t.sub++; t.sub == 1<<t.halved {
		t.sub = 0
	}
}

// flowParts are the simulations where message msg is sent and received:
// both the sampler's own, but for a partitioned run's.
func (t *telemetry) flowParts(msg int32) (snd, rcv *Sim) {
	if t.parts == nil {
		return t.s, t.s
	}
	s, m := t.s, &t.s.DAG.Msgs[msg]
	part := func(h int32) *Sim { return t.parts[s.hostPart(int(h))] }
	return part(m.Src), part(m.Dst)
}

// sampleFlow records flow f's state if it is in progress (or ended in the
// interval just closed: the sample that shows it complete).
func (t *telemetry) sampleFlow(f *flowSeries) {
	snd, rcv := t.flowParts(f.msg)
	if f.ended || snd.start[f.msg] < 0 {
		return
	}
	v, d, ok := snd.tr.flowState(f.msg, rcv.tr)
	if !ok {
		return // released but not posted yet
	}
	if rcv.end[f.msg] >= 0 {
		d = t.s.DAG.Msgs[f.msg].Bytes
		f.ended = true
	}
	k := t.n - 1 // the sample being taken
	if f.first < 0 {
		f.first = k
	}
	if j := k - f.first; j < len(f.value) {
		// Folded into a merged sample: the mean over its moments in
		// progress, the latest delivered bytes.
		f.weight[j]++
		f.value[j] += (v - f.value[j]) / float64(f.weight[j])
		f.delivered[j] = d
		return
	}
	f.value = append(f.value, v)
	f.delivered = append(f.delivered, d)
	f.weight = append(f.weight, 1)
}

// decimate merges the samples pairwise, doubling the interval a sample
// spans (sampling goes on every interval, folded in by sample): what
// happened in an interval is summed, the queue keeps the larger of the
// two samples (so maxima survive) and the port counts as paused if it was
// in either; a flow keeps its mean rate and its later delivered bytes.
func (t *telemetry) decimate() {
	np := len(t.ports)
	half := t.n / 2
	for k := 0; k < half; k++ {
		a, b, o := 2*k*np, (2*k+1)*np, k*np
		for p := 0; p < np; p++ {
			t.queue[o+p] = max(t.queue[a+p], t.queue[b+p])
			t.sent[o+p] = t.sent[a+p] + t.sent[b+p]
			t.paused[o+p] = t.paused[a+p] || t.paused[b+p]
			t.frames[o+p] = int32(min(int64(t.frames[a+p])+int64(t.frames[b+p]), math.MaxInt32))
			t.marks[o+p] = int32(min(int64(t.marks[a+p])+int64(t.marks[b+p]), math.MaxInt32))
			t.drops[o+p] = int32(min(int64(t.drops[a+p])+int64(t.drops[b+p]), math.MaxInt32))
		}
	}
	w := np * len(t.prios)
	for k := 0; k < half; k++ {
		a, b, o := 2*k*w, (2*k+1)*w, k*w
		for i := 0; i < w; i++ {
			t.qprio[o+i] = max(t.qprio[a+i], t.qprio[b+i])
		}
	}
	t.qprio = t.qprio[:half*w]
	m := half * np
	t.queue, t.sent, t.paused = t.queue[:m], t.sent[:m], t.paused[:m]
	t.frames, t.marks, t.drops = t.frames[:m], t.marks[:m], t.drops[:m]
	for _, f := range t.flows {
		f.merge()
	}
	t.n = half
	t.halved++
}

// merge halves a flow's samples on the merged clock (sample k becomes
// k/2): the mean of the sampling moments that fall together, the larger
// delivered.
func (f *flowSeries) merge() {
	if f.first < 0 {
		return
	}
	first := f.first / 2
	n := (f.first+len(f.value)-1)/2 - first + 1
	v, d, w := make([]float64, n), make([]int64, n), make([]int32, n)
	for j := range f.value {
		k := (f.first+j)/2 - first
		v[k] += f.value[j] * float64(f.weight[j])
		d[k] = max(d[k], f.delivered[j])
		w[k] += f.weight[j]
	}
	for k := range v {
		v[k] /= float64(w[k])
	}
	f.first, f.value, f.delivered, f.weight = first, v, d, w
}

// finish takes the closing sample at the run's end, spanning the time
// since the last one (folded into the last sample when that one is not
// full yet), so that what happened to the end is counted and the flows
// that end the run show complete.
func (t *telemetry) finish() { t.finishAt(t.s.Sched.Now()) }

// finishAt is finish for a run that ended at now.
func (t *telemetry) finishAt(now sim.Time) {
	if t.ended {
		return
	}
	t.ended = true
	full := t.every << t.halved
	t.span = full
	if t.sub > 0 {
		t.span = t.every * sim.Time(t.sub)
	}
	if now <= t.at {
		return
	}
	if t.sub == 0 {
		t.span = 0
	}
	t.span += now - t.at
	t.sample()
	t.at = now
}

// result is the kept ports' series and the followed flows'. Ports are the
// ones named, or the busiest by bytes sent over the run (ties in port
// order), those that sent nothing left out.
func (t *telemetry) result() *metrics.Telemetry {
	if t == nil {
		return nil
	}
	t.finish()
	order := t.named
	if order == nil && t.keep > 0 {
		for p, pt := range t.ports {
			if pt.TxBytes() > 0 {
				order = append(order, p)
			}
		}
		sort.SliceStable(order, func(i, j int) bool { return t.ports[order[i]].TxBytes() > t.ports[order[j]].TxBytes() })
		if len(order) > t.keep {
			order = order[:t.keep]
		}
	}
	out := &metrics.Telemetry{IntervalS: (t.every << t.halved).Seconds(), Samples: t.n, EndS: t.at.Seconds(), Decimated: t.halved, Ports: make([]metrics.PortSeries, 0, len(order))}
	for _, p := range order {
		out.Ports = append(out.Ports, t.portSeries(p))
	}
	for _, f := range t.flows {
		out.Flows = append(out.Flows, t.flowResult(f))
	}
	return out
}

// portSeries is port p's samples, the quantities sim.telemetry.what
// leaves out dropped.
func (t *telemetry) portSeries(p int) metrics.PortSeries {
	pt := t.ports[p]
	np := len(t.ports)
	node, peer := fabric.PortName(pt)
	tier := pt.Tier
	if pt.Sw() == nil {
		tier = "host"
	}
	ps := metrics.PortSeries{Node: node, Peer: peer, Tier: tier, RateGbps: float64(pt.Rate) / 1e9, TxBytes: pt.TxBytes(),
		QueueBytes: make([]int64, t.n), UtilPct: make([]float64, t.n), Paused: make([]int8, t.n),
		PauseFrames: make([]int64, t.n), ECNMarks: make([]int64, t.n), Drops: make([]int64, t.n)}
	// What the line rate sends in one interval; a frame counts when it
	// starts, so what passes it is carried into the next interval.
	capacity := float64(pt.Rate) / 8 * (t.every << t.halved).Seconds()
	var carry float64
	for k := 0; k < t.n; k++ {
		i := k*np + p
		if k == t.n-1 {
			// The last sample spans only the time to the run's end.
			capacity = float64(pt.Rate) / 8 * t.span.Seconds()
		}
		ps.QueueBytes[k] = t.queue[i]
		if t.paused[i] {
			ps.Paused[k] = 1
		}
		ps.PauseFrames[k], ps.ECNMarks[k], ps.Drops[k] = int64(t.frames[i]), int64(t.marks[i]), int64(t.drops[i])
		b := float64(t.sent[i]) + carry
		used := min(b, capacity)
		carry = b - used
		ps.UtilPct[k] = math.Round(1e4*used/capacity) / 1e2
	}
	for j, pr := range t.prios {
		var qs []int64
		for k := 0; k < t.n; k++ {
			if b := t.qprio[(k*np+p)*len(t.prios)+j]; b > 0 && qs == nil {
				qs = make([]int64, t.n)
			}
			if qs != nil {
				qs[k] = int64(t.qprio[(k*np+p)*len(t.prios)+j])
			}
		}
		if qs != nil {
			ps.Priorities = append(ps.Priorities, metrics.PrioQueue{Prio: int(pr), QueueBytes: qs})
		}
	}
	o := t.spec
	if !o.Records("queue") {
		ps.QueueBytes, ps.Priorities = nil, nil
	}
	if !o.Records("util") {
		ps.UtilPct = nil
	}
	if !o.Records("pause") {
		ps.Paused, ps.PauseFrames = nil, nil
	}
	if !o.Records("ecn") {
		ps.ECNMarks = nil
	}
	if !o.Records("drops") {
		ps.Drops = nil
	}
	return ps
}

// flowResult is followed flow f's series with its record's figures.
func (t *telemetry) flowResult(f *flowSeries) metrics.FlowSeries {
	s := t.s
	m := s.DAG.Msgs[f.msg]
	src, _ := s.Plan.Layout.Host(m.Src)
	dst, _ := s.Plan.Layout.Host(m.Dst)
	host := func(h int) string { return s.Topo.Net.HostPorts[h].Owner.Name() }
	fs := metrics.FlowSeries{ID: int(f.msg), Src: host(src), Dst: host(dst), Bytes: m.Bytes,
		First: max(f.first, 0), Metric: t.metric, Value: f.value, Delivered: f.delivered}
	snd, rcv := t.flowParts(f.msg)
	if st, en := snd.start[f.msg], rcv.end[f.msg]; st >= 0 && en >= 0 {
		fs.FCTS = (en - st).Seconds()
		if ideal := s.AloneFCT(int(m.Src), int(m.Dst), m.Bytes).Seconds(); ideal > 0 {
			fs.Slowdown = fs.FCTS / ideal
		}
	}
	if !t.spec.Records("rate") {
		fs.Value = nil
	}
	if !t.spec.Records("delivered") {
		fs.Delivered = nil
	}
	if fs.Value == nil && fs.Delivered == nil {
		fs.Value = []float64{} // keep the flow's figures; its series were left out
	}
	return fs
}
