package fabric

import (
	"fabriclab/sim"
	"slices"
)

// SwitchConfig is what every switch shares.
type SwitchConfig struct {
	// Buffer is the switch's packet buffer in bytes. Lossless traffic may
	// fill all of it but the PFC headroom reserved for every lossless
	// ingress queue (the shared pool), then ports pause; each ingress queue
	// is also paused at XOFF. Lossy traffic is dropped when the buffer is
	// full, beyond a guaranteed two frames per queue.
	Buffer int64
	// Trimming cuts a lossy data packet that would be dropped for want of
	// buffer to its first TrimWire bytes (its headers) and forwards that
	// at priority TrimPrio, so the receiver learns of the loss at once
	// (Ultra Ethernet's packet trimming).
	Trimming bool
	TrimWire int32
	TrimPrio uint8
	// Lossless marks the priorities protected by PFC.
	Lossless [NumPrio]bool
	// XOFF/XON are ingress thresholds per port and priority, in bytes.
	XOFF, XON int64
	// PFCDynamic replaces the static XOFF by a dynamic one, as
	// shared-buffer ASICs do: an ingress queue pauses beyond PFCAlpha ×
	// the free shared buffer (never below PFCReserved), so how early ports
	// pause depends on how full the switch is; it resumes XOFF − XON (at
	// least one frame) below that.
	PFCDynamic  bool
	PFCAlpha    float64
	PFCReserved int64
	// Watchdog, when Detect > 0, is the PFC watchdog switch vendors ship:
	// an egress queue paused without a break for Detect is taken out of
	// PFC for Restore — its pauses ignored, and with WatchdogDrop its
	// packets (queued and arriving) dropped — then watched again.
	WatchdogDetect, WatchdogRestore sim.Time
	WatchdogDrop                    bool
	// Headroom per ingress port and priority; 0 = automatic (see AutoHeadroom).
	Headroom int64
	// ECN RED marking: KMin/KMax at ECNRefRate (scaled linearly with each
	// port's rate when ECNRefRate > 0), marking probability rising to PMax.
	ECN        bool
	KMin, KMax int64
	PMax       float64
	// ECNAtDequeue marks a departing packet from the queue it leaves
	// behind (as many ASICs do) instead of an arriving one from the queue
	// it joins.
	ECNAtDequeue      bool
	ECNRefRateBps     int64
	MaxPacketWire     int64 // largest data frame, for headroom sizing
	ForwardingLatency sim.Time

	// Policy picks the egress port among equal-cost next hops.
	Policy Policy
	// FlowletGap: a flow idle this long may move to another path (flowlet
	// policies).
	FlowletGap sim.Time
	// Polarized gives every switch the same ECMP hash seed (instead of
	// mixing in the switch id), to show hash polarization.
	Polarized bool
}

// Policy is a load-balancing policy.
type Policy uint8

// Load-balancing policies.
const (
	// ECMP hashes the 5-tuple (seeded per switch): a flow keeps one path.
	ECMP Policy = iota
	// SprayRandom picks a random next hop for every packet.
	SprayRandom
	// SprayRoundRobin cycles through the next hops, per destination.
	SprayRoundRobin
	// Flowlet re-hashes a flow (randomly) after it was idle FlowletGap.
	Flowlet
	// Adaptive sends every packet to the least-loaded next hop (the one with
	// the fewest bytes queued).
	Adaptive
	// AdaptiveFlowlet moves a flow to the least-loaded next hop after an
	// idle FlowletGap.
	AdaptiveFlowlet
	// DModK is InfiniBand-style static destination routing: next hop
	// dst mod k, whatever the source.
	DModK
)

// Policies names the policies as scenarios spell them.
var Policies = map[string]Policy{
	"ecmp": ECMP, "spray-random": SprayRandom, "spray-rr": SprayRoundRobin,
	"flowlet": Flowlet, "adaptive": Adaptive, "adaptive-flowlet": AdaptiveFlowlet, "d-mod-k": DModK,
	// te: the switches hash what traffic engineering did not pin
	// (plan.InstallTE pins every connection it saw).
	"te": ECMP,
}

// Static reports whether a flow's path depends only on its 5-tuple (so it
// can be worked out without simulating).
func (p Policy) Static() bool { return p == ECMP || p == DModK }

// flowletSlots is the size of a switch's flowlet table (a hash-indexed
// array, as in hardware: colliding flows share a slot).
const flowletSlots = 4096

type flowlet struct {
	key  uint64
	last sim.Time
	port int32
}

// Switch is an output-queued switch: a packet is admitted into the shared
// buffer when its last bit arrives and queued at the egress port its route
// picks; strict priority among the eight queues of a port.
type Switch struct {
	// The fields a packet's hop reads come first: the route lookup in the
	// first line, the buffer's accounting in the second (TestSwitchLayout).

	// table is Next compiled for the per-packet lookup (routeTable).
	table routeTable
	// pins override the policy for the connections a flow list pinned to
	// a path: their packets leave by the pinned port, whatever the policy.
	pins map[connKey]*Port

	cfg  *SwitchConfig
	used int64 // bytes in the buffer
	// MaxUsed is the high-water mark of the buffer.
	MaxUsed int64
	// headroom is the PFC headroom reserved for every lossless ingress
	// queue; lossless traffic may fill the rest of the buffer (the shared
	// pool) before ports must pause.
	headroom int64
	// HashSeed is this switch's ECMP seed: switch.ecmp_seed mixed with the
	// switch id (not the scenario seed, so reseeding a workload keeps the
	// routes).
	HashSeed uint64
	Ports    []*Port

	// poolWait lists ingress ports that are below XON but stay paused until
	// the shared pool drains.
	poolWait []*Port
	// DModKDiv divides the destination before d-mod-k takes it modulo the
	// group size: 1 at the edge, the edge group size one tier up.
	DModKDiv int
	net      *Network
	rng      *sim.RNG

	ID   int
	name string
	Tier string
	// Next[dst host] lists the equal-cost egress ports toward dst. Whoever
	// changes it after packets have been routed calls RoutesChanged.
	Next [][]*Port

	// Load-balancing state: a random stream for spraying and flowlets, a
	// round-robin counter per destination, the flowlet table.
	lb       *sim.RNG
	rr       []uint32
	flowlets []flowlet
}

// connKey is a connection's 5-tuple fields.
type connKey struct{ src, dst, sqp, dqp int32 }

// Pin makes the packets of connection (src, dst, sqp, dqp) leave this
// switch by out (a port of this switch), whatever the policy says; a
// failed out loses them.
func (s *Switch) Pin(src, dst, sqp, dqp int32, out *Port) {
	if s.pins == nil {
		s.pins = map[connKey]*Port{}
	}
	s.pins[connKey{src, dst, sqp, dqp}] = out
}

// DropBrokenPins removes every pin whose path no longer reaches its
// destination over working links (a link on it failed): that connection
// then follows the switches' recomputed routes. Engines call it when
// routes reconverge after a failure. Which pins break is decided on the
// pins as they stood, so the order switches are visited does not matter.
func (n *Network) DropBrokenPins() {
	type broken struct {
		s *Switch
		k connKey
	}
	var drop []broken
	for _, s := range n.Switches {
		for k, pt := range s.pins {
			if !pinReaches(k, pt) {
				drop = append(drop, broken{s, k})
			}
		}
	}
	for _, b := range drop {
		delete(b.s.pins, b.k)
	}
}

// pinReaches follows connection k from egress port pt (pins first, then
// routes) and reports whether it reaches a host over working ports.
func pinReaches(k connKey, pt *Port) bool {
	for hops := 0; hops < 64 && pt != nil; hops++ {
		if pt.dead {
			return false
		}
		sw, ok := pt.Peer.Owner.(*Switch)
		if !ok {
			return true // a host: the destination
		}
		pt = sw.NextHop(k.src, k.dst, k.sqp, k.dqp)
	}
	return false
}

// Pinned is the port the connection with this 5-tuple is pinned to, or
// nil (analysis and tests read what Pin installed).
func (s *Switch) Pinned(src, dst, sqp, dqp int32) *Port { return s.pins[connKey{src, dst, sqp, dqp}] }

// sharedLimit is the buffer lossless traffic may use before pausing: all
// of it but the reserved headroom.
func (s *Switch) sharedLimit() int64 { return s.cfg.Buffer - s.headroom }

// poolOK reports whether the shared pool has drained enough to resume: a
// hysteresis of XOFF − XON (at least one frame) below its limit.
func (s *Switch) poolOK() bool {
	hyst := max(s.cfg.XOFF-s.cfg.XON, s.cfg.MaxPacketWire)
	return s.used <= s.sharedLimit()-hyst
}

// Name implements Node.
func (s *Switch) Name() string { return s.name }

// Receive implements Node: route, admit (or drop / pause), mark, enqueue.
func (s *Switch) Receive(p *Packet, in *Port) {
	out := s.route(p)
	if out == nil {
		s.drop(p, in)
		return
	}
	w := int64(p.Wire)
	pr := p.Prio
	if s.cfg.Lossless[pr] {
		xoff := in.xoff
		if s.cfg.PFCDynamic {
			xoff = s.dynamicXOFF()
			if in.pauseSent[pr] {
				xoff = max(xoff, in.pauseLevel[pr]) // the headroom counts from where it paused
			} else {
				// Other queues filled the buffer and the threshold fell
				// below this queue: it pauses now, its headroom counting
				// from here.
				xoff = max(xoff, in.ingress[pr])
			}
		}
		if in.ingress[pr]+w > xoff+in.headroom {
			// Headroom too small for what was in flight: a real switch drops.
			s.drop(p, in)
			return
		}
		in.ingress[pr] += w
		// Pause at XOFF, or earlier when the shared pool is full: from then
		// on only the reserved headroom absorbs what is in flight.
		if !in.pauseSent[pr] && (in.ingress[pr] > xoff || s.used+w > s.sharedLimit()) {
			in.pauseLevel[pr] = xoff
			in.sendPFC(pr, true)
		}
	} else {
		// Lossy: dropped when the buffer is full, except that every queue
		// keeps a guaranteed minimum of two frames (so ACKs and CNPs get
		// through a buffer that lossless traffic has filled).
		if s.used+w > s.cfg.Buffer && out.queues[pr].bytes+w > 2*s.cfg.MaxPacketWire {
			if !s.cfg.Trimming || p.Kind != Data || p.Trimmed || p.Wire <= s.cfg.TrimWire {
				s.drop(p, in)
				return
			}
			s.trim(p, in)
			w, pr = int64(p.Wire), p.Prio
			if s.used+w > s.cfg.Buffer && out.queues[pr].bytes+w > 2*s.cfg.MaxPacketWire {
				s.drop(p, in)
				return
			}
		}
		in.ingress[pr] += w
	}
	s.used += w
	if s.used > s.MaxUsed {
		s.MaxUsed = s.used
	}
	p.inPort = int32(in.Index)
	if !s.cfg.ECNAtDequeue {
		out.mark(p, out.queues[pr].bytes)
	}
	out.Enqueue(p)
}

// dynamicXOFF is the dynamic pause threshold: PFCAlpha × the free shared
// buffer, at least PFCReserved.
func (s *Switch) dynamicXOFF() int64 {
	free := max(s.sharedLimit()-s.used, 0)
	return max(int64(s.cfg.PFCAlpha*float64(free)), s.cfg.PFCReserved)
}

// xonOf is where ingress port in resumes: its static XON, or with dynamic
// thresholds the hysteresis below the current dynamic XOFF.
func (s *Switch) xonOf(in *Port) int64 {
	if !s.cfg.PFCDynamic {
		return in.xon
	}
	hyst := max(s.cfg.XOFF-s.cfg.XON, s.cfg.MaxPacketWire)
	return max(s.dynamicXOFF()-hyst, 0)
}

// mark is RED ECN marking of data packet p against queue bytes q of this
// egress port: never below KMin, always from KMax, linearly up to PMax
// between.
func (pt *Port) mark(p *Packet, q int64) {
	if p.Kind != Data || p.Trimmed || pt.kmax == 0 || p.CE || q <= pt.kmin {
		return
	}
	if q >= pt.kmax || pt.sw.rng.Float64() < pt.pmax*float64(q-pt.kmin)/float64(pt.kmax-pt.kmin) {
		p.CE = true
		pt.C.ECNMarks++
	}
}

// release frees p's buffer and ingress accounting as it leaves for the wire
// and resumes the upstream sender once the ingress queue drains below XON.
func (s *Switch) release(p *Packet) {
	w := int64(p.Wire)
	s.used -= w
	in := s.Ports[p.inPort]
	pr := p.Prio
	in.ingress[pr] -= w
	if in.pauseSent[pr] && in.ingress[pr] <= s.xonOf(in) && !in.waiting {
		if s.poolOK() {
			in.sendPFC(pr, false)
		} else {
			in.waiting = true
			s.poolWait = append(s.poolWait, in)
		}
	}
	if len(s.poolWait) > 0 && s.poolOK() {
		for _, q := range s.poolWait {
			q.waiting = false
			for pr := range q.pauseSent {
				if q.pauseSent[pr] && q.ingress[pr] <= s.xonOf(q) {
					q.sendPFC(uint8(pr), false)
				}
			}
		}
		s.poolWait = s.poolWait[:0]
	}
}

// trim cuts p to its headers (SwitchConfig.Trimming): the bytes cut off
// count as dropped, the packet goes on at the trim priority.
func (s *Switch) trim(p *Packet, in *Port) {
	in.C.Trims++
	s.net.DroppedBytes += int64(p.Wire - s.cfg.TrimWire)
	s.net.TrimmedPackets++
	p.Wire, p.Payload, p.Trimmed, p.Prio = s.cfg.TrimWire, 0, true, s.cfg.TrimPrio
}

func (s *Switch) drop(p *Packet, in *Port) {
	in.C.Drops++
	s.net.DroppedBytes += int64(p.Wire)
	s.net.DroppedPackets++
	s.net.Pool.Put(p)
}

// route picks the egress port of p by the switch's policy (or its pin).
func (s *Switch) route(p *Packet) *Port {
	if s.pins != nil {
		if pt := s.pins[connKey{p.Src, p.Dst, p.SrcQP, p.DstQP}]; pt != nil {
			return pt
		}
	}
	g := s.group(p.Dst)
	if len(g) <= 1 {
		if len(g) == 0 {
			return nil
		}
		return g[0]
	}
	switch s.cfg.Policy {
	case SprayRandom:
		return g[s.lb.IntN(len(g))]
	case SprayRoundRobin:
		if s.rr == nil {
			s.rr = make([]uint32, len(s.Next))
		}
		i := s.rr[p.Dst]
		s.rr[p.Dst]++
		return g[int(i)%len(g)]
	case Adaptive:
		return leastLoaded(g, s.lb.Uint64())
	case Flowlet, AdaptiveFlowlet:
		return s.flowletHop(p, g)
	}
	return s.staticPick(g, p.Src, p.Dst, p.SrcQP, p.DstQP)
}

// group is the equal-cost next hops toward dst (nil when unreachable).
func (s *Switch) group(dst int32) []*Port {
	t := &s.table
	if !t.ok {
		t.compile(s.Next)
	}
	if dst < 0 || int(dst) >= len(t.index) {
		return nil
	}
	return t.groups[t.index[dst]]
}

// RoutesChanged makes the switch read Next again before routing the next
// packet.
func (s *Switch) RoutesChanged() { s.table.ok = false }

// routeTable is Next as the per-packet lookup reads it: a 4-byte group
// number per destination and the distinct groups once each. Destinations
// behind the same switch share a group, so the table is a sixth of Next's
// slice headers and stays in cache on large fabrics.
type routeTable struct {
	ok     bool
	index  []uint32
	groups [][]*Port
}

func (t *routeTable) compile(next [][]*Port) {
	t.ok = true
	t.index = slices.Grow(t.index[:0], len(next))[:len(next)]
	t.groups = t.groups[:0]
	type key struct {
		first *Port
		n     int
	}
	seen := map[key]uint32{}
	for d, g := range next {
		k := key{n: len(g)}
		if len(g) > 0 {
			k.first = g[0]
		}
		i, ok := seen[k]
		if ok && !slices.Equal(t.groups[i], g) {
			ok = false // the same first hop and size, other hops: a group of its own
		}
		if !ok {
			i = uint32(len(t.groups))
			t.groups = append(t.groups, g)
			if _, taken := seen[k]; !taken {
				seen[k] = i
			}
		}
		t.index[d] = i
	}
}

// HashPick is the port a packet with this 5-tuple leaves by under the
// switch's static choice (its ECMP hash, or d-mod-k), on its current
// routes; nil without a route. Planners (QP-aware entropy) ask it what
// the switch will do.
func (s *Switch) HashPick(src, dst, sqp, dqp int32) *Port {
	g := s.group(dst)
	if len(g) == 0 {
		return nil
	}
	return s.staticPick(g, src, dst, sqp, dqp)
}

// staticPick is the choice among g of a static policy: InfiniBand d-mod-k
// (at tier level l the port is ⌊dst / m^(l−1)⌋ mod m; DModKDiv holds
// m^(l−1) for this switch), else the ECMP hash of the 5-tuple.
func (s *Switch) staticPick(g []*Port, src, dst, sqp, dqp int32) *Port {
	if s.cfg.Policy == DModK {
		return g[(int(dst)/max(s.DModKDiv, 1))%len(g)]
	}
	return g[FlowHash(src, dst, sqp, dqp, s.HashSeed)%uint64(len(g))]
}

// leastLoaded is the port with the fewest bytes waiting (queued, plus the
// frame on the wire), searching from a random start h so that ties (idle
// ports) are broken at random, as switches do, rather than always the same
// way (which would make adaptive routing behave like ECMP until queues
// build).
func leastLoaded(g []*Port, h uint64) *Port {
	start := int(h % uint64(len(g)))
	var best *Port
	var bl int64
	for k := 0; k < len(g); k++ {
		pt := g[(start+k)%len(g)]
		if pt.dead {
			continue // a failed port is out at once, before routes converge
		}
		if best == nil || pt.load() < bl {
			best, bl = pt, pt.load()
		}
	}
	if best == nil {
		return g[start] // every choice failed: the packet is lost there
	}
	return best
}

// flowletHop keeps a flow on its port while its packets come closer than
// FlowletGap; after a longer gap the flow may move (randomly, or to the
// least-loaded port for AdaptiveFlowlet) without reordering its packets.
func (s *Switch) flowletHop(p *Packet, g []*Port) *Port {
	if s.flowlets == nil {
		s.flowlets = make([]flowlet, flowletSlots)
	}
	h := FlowHash(p.Src, p.Dst, p.SrcQP, p.DstQP, s.HashSeed)
	e := &s.flowlets[h%flowletSlots]
	now := s.net.Sched.Now()
	if e.key != h || now-e.last > s.cfg.FlowletGap || int(e.port) >= len(g) {
		e.key = h
		if s.cfg.Policy == AdaptiveFlowlet {
			pt := leastLoaded(g, s.lb.Uint64())
			for i := range g {
				if g[i] == pt {
					e.port = int32(i)
				}
			}
		} else {
			e.port = int32(s.lb.IntN(len(g)))
		}
	}
	e.last = now
	return g[e.port]
}

// NextHop is the egress port a static policy (ECMP, d-mod-k) picks for a
// packet of the given 5-tuple (nil when dst is unreachable); dynamic
// policies are answered as ECMP would. Analyses use it to follow a flow's
// exact path.
func (s *Switch) NextHop(src, dst, sqp, dqp int32) *Port {
	if pt := s.pins[connKey{src, dst, sqp, dqp}]; pt != nil {
		return pt
	}
	g := s.group(dst)
	if len(g) <= 1 {
		if len(g) == 0 {
			return nil
		}
		return g[0]
	}
	return s.staticPick(g, src, dst, sqp, dqp)
}

// FlowHash is the 5-tuple ECMP hash: source and destination address, the QP
// numbers standing in for UDP ports, and a per-switch seed. It is a
// splitmix64 finalizer over the packed tuple: cheap and well mixed.
func FlowHash(src, dst, sqp, dqp int32, seed uint64) uint64 {
	x := seed ^ (uint64(uint32(src))<<32 | uint64(uint32(dst)))
	x = mix64(x)
	x ^= uint64(uint32(sqp))<<32 | uint64(uint32(dqp))
	return mix64(x)
}

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
