package lab

import (
	"fabriclab/fabric"
	"fabriclab/flow"
	"fabriclab/measure"
	"fabriclab/metrics"
	"fabriclab/sim"
)

// Result summarizes the simulation as it stands (complete or not): see
// measure.Result. Alone CCTs are filled by engine.RunJob.
func (s *Sim) Result() metrics.SizeResult { return measure.Result(s.Plan, s.Trace()) }

// Trace is what the simulation recorded so far: every message's start and
// delivery, the fabric's counters (every port, then every NIC's transport
// counters) and the bounds of the plan on this fabric.
func (s *Sim) Trace() *measure.Trace {
	if s.merged != nil {
		return s.merged // a partitioned run's, whole (partition.go)
	}
	now := s.Sched.Now()
	t := &measure.Trace{Start: s.start, End: s.end, Delivered: s.done,
		Now: now, Events: s.Sched.Executed, Window: s.windowData, Bounds: s.bounds()}
	t.Cut = s.cut()
	if s.window && s.Done() {
		// The run ended before a snapshot was due: nothing was delivered
		// after the end, so the end's figure stands for it.
		for k := range t.Window {
			if t.Window[k] < 0 {
				t.Window[k] = s.Topo.Net.DeliveredData
			}
		}
	}
	f := s.fabricCounters(s.Topo.Net.Ports, now, s.tr.nicCounters, s.tr.counters())
	for _, o := range s.outages {
		if o.rec.DownS > now.Seconds() {
			continue // the run ended before this outage
		}
		o.finish() // a link still down at the end: its record so far
		f.Failures = append(f.Failures, *o.rec)
	}
	f.Conservation = s.Topo.Net.Balance()
	if s.explain_ != nil {
		f.Explain = &explainMode{s: s, e: s.explain_, ports: s.Topo.Net.Ports, now: now}
	}
	f.Telemetry = s.tel.result()
	t.Fabric = f
	return t
}

// fabricCounters is the fabric's counters in a trace: ports (every port
// of the fabric, by ID) read at at, summed with the transport's counters
// into the totals, their balance, and with sim.port_counters the ports
// worth reporting, a host's with its NIC's counters (nic).
func (s *Sim) fabricCounters(ports []*fabric.Port, at sim.Time, nic func(h int) metrics.Counters, transport metrics.Counters) *measure.Fabric {
	f := &measure.Fabric{}
	host := make(map[int]int, len(s.Topo.Net.HostPorts)) // port ID → host
	for h, pt := range s.Topo.Net.HostPorts {
		if pt != nil {
			host[pt.ID] = h
		}
	}
	for _, pt := range ports {
		c := pt.Counters(at)
		f.Totals.Add(c)
		if !s.Job.Spec.Sim.PortCounters {
			continue
		}
		if h, ok := host[pt.ID]; ok {
			c.Add(nic(h))
		}
		if c.TxPackets > 0 || c.PFCPausesRecv > 0 || c.Drops > 0 {
			node, peer := fabric.PortName(pt)
			f.Ports = append(f.Ports, metrics.PortCounters{Node: node, Peer: peer, Tier: pt.Tier, Counters: c})
		}
	}
	f.Totals.Add(transport)
	f.Totals.UtilizationPct = 0
	f.Balance = balance(ports, at)
	return f
}

// bounds are the plan's bounds on this fabric.
func (s *Sim) bounds() *measure.FabricBounds { return measure.TopologyBounds(s.Plan, s.Topo) }

// AloneFCT is the completion time of a message of bytes from src to dst on
// the idle fabric (measure.FabricBounds.AloneFCT).
func (s *Sim) AloneFCT(src, dst int, bytes int64) sim.Time {
	return s.bounds().AloneFCT(int32(src), int32(dst), bytes)
}

// IdealTime is the main job's bound through the most loaded NIC or edge
// uplink (measure.FabricBounds.Ideal).
func (s *Sim) IdealTime() sim.Time {
	p := s.Plan.Parts[0]
	return s.bounds().Ideal(p.Lo, p.Hi)
}

// RoutedIdealTime is the main job's bound with every message on the path
// its 5-tuple hashes to (measure.FabricBounds.Routed), whatever the
// forwarding policy.
func (s *Sim) RoutedIdealTime() sim.Time {
	p := s.Plan.Parts[0]
	return s.bounds().Routed(p.Lo, p.Hi)
}

// CollectiveIdeal is the main job's algorithm-independent bound
// (measure.CollectiveIdeal).
func (s *Sim) CollectiveIdeal() sim.Time { return measure.CollectiveIdeal(s.Plan.Parts[0], s.bounds()) }

// Path implements flow.Pather: message i's static path, checked for loops
// and wrong deliveries.
func (s *Sim) Path(i int) ([]*fabric.Port, error) {
	src, dst, sqp, dqp := s.Plan.Tuple(i)
	return flow.StaticPath(s.Topo.Net, src, dst, sqp, dqp)
}

// Conn implements flow.Pather: (source host, source QP), unique per
// connection.
func (s *Sim) Conn(i int) uint64 { return flow.ConnID(s.Plan.Tuple(i)) }

// FlowPath is the ports message i crosses (its sender's NIC port first)
// under the switches' static routing (measure.FabricBounds.FlowPath). Nil
// for a marker.
func (s *Sim) FlowPath(i int) []*fabric.Port { return s.bounds().FlowPath(i) }

// balance is the links' load per tier (by the tier of the node a link
// leaves) and the ports' paused time over the run to now: what
// metrics.Balance reports.
func balance(ports []*fabric.Port, now sim.Time) *metrics.Balance {
	if now <= 0 || len(ports) == 0 {
		return nil
	}
	type acc struct {
		n        int
		sum, max float64
	}
	byTier := map[string]*acc{}
	var order []string
	b := &metrics.Balance{}
	secs := now.Seconds()
	for _, pt := range ports {
		c := pt.Counters(now)
		share := min(c.PFCPausedS/secs, 1) // paused on several priorities at once counts once
		b.PFCPausedShare += share
		b.PFCPausedMax = max(b.PFCPausedMax, share)
		tier := pt.Tier
		if pt.Sw() == nil {
			tier = "host"
		}
		a := byTier[tier]
		if a == nil {
			a = &acc{}
			byTier[tier] = a
			order = append(order, tier)
		}
		gbps := float64(c.TxBytes) * 8 / secs / 1e9
		a.n++
		a.sum += gbps
		a.max = max(a.max, gbps)
	}
	b.PFCPausedShare /= float64(len(ports))
	for _, tier := range order {
		a := byTier[tier]
		tl := metrics.TierLoad{Tier: tier, Links: a.n, MeanGbps: a.sum / float64(a.n), MaxGbps: a.max}
		if tl.MeanGbps > 0 {
			tl.MMR = tl.MaxGbps / tl.MeanGbps
		}
		b.Tiers = append(b.Tiers, tl)
	}
	return b
}
