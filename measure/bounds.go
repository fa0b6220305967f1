package measure

import (
	"fabriclab/fabric"
	"fabriclab/plan"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
	"fabriclab/workload"
)

// TopologyBounds are the bounds of plan p on the simulated topology tp, as
// its routes stand when they are read (after a run: reconverged around
// the links that failed). Packets of nic.mtu payload and nic.overhead
// bytes of headers are assumed, as the packet engine sends them.
func TopologyBounds(p *plan.Plan, tp *topo.Topology) *FabricBounds {
	return &FabricBounds{Plan: p, Topo: tp}
}

// FabricBounds are a plan's bounds on a simulated topology (see
// TopologyBounds).
type FabricBounds struct {
	Plan *plan.Plan
	Topo *topo.Topology
}

// AloneFCT is the completion time of a message of bytes from src to dst on
// the idle fabric: every packet serialized at the path's slowest link, the
// last packet's store-and-forward on every other hop, and the propagation
// (plus switch latency) of every hop.
func (b *FabricBounds) AloneFCT(src, dst int32, bytes int64) sim.Time {
	cfg := b.Plan.Job.Spec.NIC
	mtu, ovh := int64(cfg.MTU), int64(cfg.Overhead)
	n := max((bytes+mtu-1)/mtu, 1)
	lastWire := bytes - (n-1)*mtu + ovh
	wire := bytes + n*ovh
	ports := b.Topo.Net.Path(int(src), int(dst)) // first ECMP choice at each switch: on a symmetric fabric every choice is as long
	k := 0
	for i, pt := range ports {
		if pt.Rate < ports[k].Rate {
			k = i
		}
	}
	t := units.SerializationTime(units.Size(wire), ports[k].Rate)
	for i, pt := range ports {
		t += pt.Delay
		if i != k {
			t += pt.TxTime(int32(lastWire))
		}
	}
	return t
}

// NICRate is endpoint id's NIC rate.
func (b *FabricBounds) NICRate(id int) units.Rate { return b.Topo.Net.HostPorts[id].Rate }

// Ideal is the payload messages [lo, hi) force through the most loaded
// link divided by that link's rate: each host's NIC (send and receive),
// and each edge switch's uplinks taken together (traffic leaving or
// entering the edge). On a non-blocking fabric this is the NIC bound.
// Messages with a late earliest start add their start to their own
// serialization.
func (b *FabricBounds) Ideal(lo, hi int32) sim.Time {
	msgs := b.Plan.DAG.Msgs[lo:hi]
	tp := b.Topo
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
	// A message cannot end before its earliest start plus its own
	// serialization; CCT counts from the earliest start, so the bound
	// does too.
	start := earliestStarts(b.Plan.DAG, lo, hi)
	var first sim.Time = -1
	for i, m := range msgs {
		if !m.Marker && (first < 0 || start[i] < first) {
			first = start[i]
		}
	}
	for i, m := range msgs {
		if !m.Marker && start[i] > first {
			r := min(tp.Net.HostPorts[m.Src].Rate, tp.Net.HostPorts[m.Dst].Rate)
			if t := start[i] - first + units.SerializationTime(units.Size(m.Bytes), r); t > worst {
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

// FlowPath is the ports message i crosses (its sender's NIC port first)
// under the switches' static routing: the ECMP hash of its 5-tuple at
// every switch, or d-mod-k. Dynamic policies are followed as ECMP would
// be. Nil for a marker.
func (b *FabricBounds) FlowPath(i int) []*fabric.Port {
	if b.Plan.DAG.Msgs[i].Marker {
		return nil
	}
	src, dst, sqp, dqp := b.Plan.Tuple(i)
	pt := b.Topo.Net.HostPorts[src]
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

// RoutedIdeal is Routed when a switch's path choice follows from the
// 5-tuple alone (StaticRouting); ok is false otherwise.
func (b *FabricBounds) RoutedIdeal(lo, hi int32) (sim.Time, bool) {
	if !StaticRouting(b.Plan.Job.Spec) {
		return 0, false
	}
	return b.Routed(lo, hi), true
}

// Routed is the most loaded link's payload divided by its rate, with
// every message of [lo, hi) on the path its 5-tuple hashes to (FlowPath);
// at least Ideal, equal on a fabric where routing spreads load perfectly.
func (b *FabricBounds) Routed(lo, hi int32) sim.Time {
	load := make(map[*fabric.Port]int64)
	for i := lo; i < hi; i++ {
		for _, pt := range b.FlowPath(int(i)) {
			load[pt] += b.Plan.DAG.Msgs[i].Bytes
		}
	}
	var worst sim.Time
	for pt, n := range load {
		if t := units.SerializationTime(units.Size(n), pt.Rate); t > worst {
			worst = t
		}
	}
	if it := b.Ideal(lo, hi); it > worst {
		worst = it
	}
	return worst
}

// StaticRouting reports whether every switch's path choice follows from
// the 5-tuple alone (so paths can be worked out without simulating).
func StaticRouting(spec *scenario.Scenario) bool {
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

// earliestStarts gives each message of [lo, hi) the earliest time it can
// start: its own At (a replayed flow's start, a message's arrival), or
// the earliest start of a message it waits for in the range, if later. A
// reply's At is 0, but it cannot start before its request. Only starts
// pass along the dependencies, not the time the messages waited for take
// to send: a bound with those would be a critical path, which the NIC
// and link bounds above do not claim to be. Messages wait only for
// earlier ones (DAG.Add), so one pass in index order does.
func earliestStarts(d *workload.DAG, lo, hi int32) []sim.Time {
	start := make([]sim.Time, hi-lo)
	for i := lo; i < hi; i++ {
		start[i-lo] = max(start[i-lo], d.Msgs[i].At)
		for _, j := range d.Successors(i) {
			if j < hi {
				start[j-lo] = max(start[j-lo], start[i-lo])
			}
		}
	}
	return start
}
