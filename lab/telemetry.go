package lab

import (
	"math"
	"slices"
	"sort"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/scenario"
	"fabriclab/sim"
)

// telemetry is sim.telemetry's sampler: one event per interval snapshots
// every port of the fabric into flat arrays (sample k of port p at
// k·P + p), and at the end of the run the busiest ports' series are cut
// out of them. It records everything cheaply and selects at the end, so
// the ranking needs no second run; what it costs is one event and a pass
// over the ports per interval, and about 29 bytes per port-sample
// (bounded by scenario.CheckTelemetry).
type telemetry struct {
	s     *Sim
	ports []*fabric.Port
	every sim.Time
	keep  int
	prio  uint8
	most  int // samples that fit scenario.MaxTelemetrySamples
	n     int // samples taken

	queue  []int64 // bytes queued, all priorities
	sent   []int64 // wire bytes sent in the interval
	paused []bool  // the data priority paused by the peer
	frames []int32 // pause frames received in the interval
	marks  []int32 // ECN marks in the interval
	drops  []int32 // drops in the interval
	last   []portCounts
}

// portCounts are a port's running counters at the last sample.
type portCounts struct{ tx, frames, marks, drops int64 }

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
	t := &telemetry{s: s, ports: ports, every: o.Every(), keep: o.Ports,
		prio: uint8(spec.NIC.DataPriority), most: scenario.MaxTelemetrySamples / max(len(ports), 1),
		last: make([]portCounts, len(ports))}
	// Room for the samples up to the time limit, or a first few of them
	// when the limit is far: the arrays grow as the run goes on.
	c := len(ports) * int(min(o.Samples(spec.Sim.TimeLimit), int64(t.most), 64))
	t.queue, t.sent = make([]int64, 0, c), make([]int64, 0, c)
	t.paused = make([]bool, 0, c)
	t.frames, t.marks, t.drops = make([]int32, 0, c), make([]int32, 0, c), make([]int32, 0, c)
	return t, nil
}

// start schedules the first sample.
func (t *telemetry) start() { t.s.Sched.At(t.s.Sched.Now()+t.every, t, 0) }

// OnEvent takes a sample and schedules the next while the run goes on:
// while messages remain and something else is left to happen (a sampler
// alone never keeps a finished or stalled run alive).
func (t *telemetry) OnEvent(now sim.Time, _ uint64) {
	t.sample()
	if t.n < t.most && !t.s.Done() && t.s.Sched.Pending() > 0 {
		t.s.Sched.At(now+t.every, t, 0)
	}
}

// sample appends one snapshot of every port.
func (t *telemetry) sample() {
	np := len(t.ports)
	k := len(t.queue)
	t.queue = slices.Grow(t.queue, np)[:k+np]
	t.sent = slices.Grow(t.sent, np)[:k+np]
	t.paused = slices.Grow(t.paused, np)[:k+np]
	t.frames = slices.Grow(t.frames, np)[:k+np]
	t.marks = slices.Grow(t.marks, np)[:k+np]
	t.drops = slices.Grow(t.drops, np)[:k+np]
	q, sent, paused := t.queue[k:], t.sent[k:], t.paused[k:]
	frames, marks, drops := t.frames[k:], t.marks[k:], t.drops[k:]
	for p, pt := range t.ports {
		l := &t.last[p]
		c := &pt.C
		q[p] = pt.QueueBytes()
		paused[p] = pt.Paused(t.prio)
		sent[p] = c.TxBytes - l.tx
		frames[p] = int32(min(c.PFCPausesRecv-l.frames, math.MaxInt32))
		marks[p] = int32(min(c.ECNMarks-l.marks, math.MaxInt32))
		drops[p] = int32(min(c.Drops-l.drops, math.MaxInt32))
		*l = portCounts{c.TxBytes, c.PFCPausesRecv, c.ECNMarks, c.Drops}
	}
	t.n++
}

// result is the kept ports' series: the busiest by bytes sent over the
// run (ties in port order), those that sent nothing left out.
func (t *telemetry) result() *metrics.Telemetry {
	if t == nil {
		return nil
	}
	order := make([]int, 0, len(t.ports))
	for p, pt := range t.ports {
		if pt.C.TxBytes > 0 {
			order = append(order, p)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return t.ports[order[i]].C.TxBytes > t.ports[order[j]].C.TxBytes })
	if len(order) > t.keep {
		order = order[:t.keep]
	}
	out := &metrics.Telemetry{IntervalS: t.every.Seconds(), Samples: t.n, Ports: make([]metrics.PortSeries, 0, len(order))}
	np := len(t.ports)
	for _, p := range order {
		pt := t.ports[p]
		node, peer := fabric.PortName(pt)
		tier := pt.Tier
		if pt.Sw() == nil {
			tier = "host"
		}
		ps := metrics.PortSeries{Node: node, Peer: peer, Tier: tier, RateGbps: float64(pt.Rate) / 1e9, TxBytes: pt.C.TxBytes,
			QueueBytes: make([]int64, t.n), UtilPct: make([]float64, t.n), Paused: make([]int8, t.n),
			PauseFrames: make([]int64, t.n), ECNMarks: make([]int64, t.n), Drops: make([]int64, t.n)}
		// What the line rate sends in one interval; a frame counts when it
		// starts, so what passes it is carried into the next interval.
		capacity := float64(pt.Rate) / 8 * t.every.Seconds()
		var carry float64
		for k := 0; k < t.n; k++ {
			i := k*np + p
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
		out.Ports = append(out.Ports, ps)
	}
	return out
}
