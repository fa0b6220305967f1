package fabric

import (
	"fabriclab/sim"
)

// SwitchConfig is what every switch shares.
type SwitchConfig struct {
	// Buffer is the switch's packet buffer in bytes. Lossless traffic may
	// fill all of it but the PFC headroom reserved for every lossless
	// ingress queue (the shared pool), then ports pause; each ingress queue
	// is also paused at XOFF. Lossy traffic is dropped when the buffer is
	// full, beyond a guaranteed two frames per queue.
	Buffer int64
	// Lossless marks the priorities protected by PFC.
	Lossless [NumPrio]bool
	// XOFF/XON are ingress thresholds per port and priority, in bytes.
	XOFF, XON int64
	// Headroom per ingress port and priority; 0 = automatic (see AutoHeadroom).
	Headroom int64
	// ECN RED marking: KMin/KMax at ECNRefRate (scaled linearly with each
	// port's rate when ECNRefRate > 0), marking probability rising to PMax.
	ECN               bool
	KMin, KMax        int64
	PMax              float64
	ECNRefRateBps     int64
	MaxPacketWire     int64 // largest data frame, for headroom sizing
	ForwardingLatency sim.Time
}

// Switch is an output-queued switch: a packet is admitted into the shared
// buffer when its last bit arrives and queued at the egress port its route
// picks; strict priority among the eight queues of a port.
type Switch struct {
	ID    int
	name  string
	Tier  string
	Ports []*Port
	// Next[dst host] lists the equal-cost egress ports toward dst.
	Next [][]*Port
	// HashSeed is this switch's ECMP seed: switch.ecmp_seed mixed with the
	// switch id (not the scenario seed, so reseeding a workload keeps the
	// routes).
	HashSeed uint64

	cfg  *SwitchConfig
	net  *Network
	rng  *sim.RNG
	used int64 // bytes in the buffer
	// MaxUsed is the high-water mark of the buffer.
	MaxUsed int64
	// headroom is the PFC headroom reserved for every lossless ingress
	// queue; lossless traffic may fill the rest of the buffer (the shared
	// pool) before ports must pause.
	headroom int64
	// poolWait lists ingress ports that are below XON but stay paused until
	// the shared pool drains.
	poolWait []*Port
}

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
		if in.ingress[pr]+w > in.xoff+in.headroom {
			// Headroom too small for what was in flight: a real switch drops.
			s.drop(p, in)
			return
		}
		in.ingress[pr] += w
		// Pause at XOFF, or earlier when the shared pool is full: from then
		// on only the reserved headroom absorbs what is in flight.
		if !in.pauseSent[pr] && (in.ingress[pr] > in.xoff || s.used+w > s.sharedLimit()) {
			in.sendPFC(pr, true)
		}
	} else {
		// Lossy: dropped when the buffer is full, except that every queue
		// keeps a guaranteed minimum of two frames (so ACKs and CNPs get
		// through a buffer that lossless traffic has filled).
		if s.used+w > s.cfg.Buffer && out.qbytes[pr]+w > 2*s.cfg.MaxPacketWire {
			s.drop(p, in)
			return
		}
		in.ingress[pr] += w
	}
	s.used += w
	if s.used > s.MaxUsed {
		s.MaxUsed = s.used
	}
	p.inPort = int32(in.Index)
	if p.Kind == Data && out.kmax > 0 && !p.CE {
		q := out.qbytes[pr]
		if q > out.kmin {
			if q >= out.kmax || s.rng.Float64() < out.pmax*float64(q-out.kmin)/float64(out.kmax-out.kmin) {
				p.CE = true
				out.C.ECNMarks++
			}
		}
	}
	out.Enqueue(p)
}

// release frees p's buffer and ingress accounting as it leaves for the wire
// and resumes the upstream sender once the ingress queue drains below XON.
func (s *Switch) release(p *Packet) {
	w := int64(p.Wire)
	s.used -= w
	in := s.Ports[p.inPort]
	pr := p.Prio
	in.ingress[pr] -= w
	if in.pauseSent[pr] && in.ingress[pr] <= in.xon && !in.waiting {
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
				if q.pauseSent[pr] && q.ingress[pr] <= q.xon {
					q.sendPFC(uint8(pr), false)
				}
			}
		}
		s.poolWait = s.poolWait[:0]
	}
}

func (s *Switch) drop(p *Packet, in *Port) {
	in.C.Drops++
	s.net.DroppedBytes += int64(p.Wire)
	s.net.DroppedPackets++
	s.net.Pool.Put(p)
}

func (s *Switch) route(p *Packet) *Port {
	return s.NextHop(p.Src, p.Dst, p.SrcQP, p.DstQP)
}

// NextHop is the egress port this switch picks for a packet of the given
// 5-tuple (nil when dst is unreachable). Analyses use it to follow a flow's
// exact path.
func (s *Switch) NextHop(src, dst, sqp, dqp int32) *Port {
	if int(dst) >= len(s.Next) || dst < 0 {
		return nil
	}
	g := s.Next[dst]
	switch len(g) {
	case 0:
		return nil
	case 1:
		return g[0]
	}
	h := FlowHash(src, dst, sqp, dqp, s.HashSeed)
	return g[h%uint64(len(g))]
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
