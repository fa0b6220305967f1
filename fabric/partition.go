package fabric

import (
	"fabriclab/internal/ring"
	"fabriclab/sim"
)

// Export is what one part of a partitioned run (lab/partition.go) hands
// another at a window's end: a frame put on a link whose far end the
// other part owns (Pkt, a copy; Port the sending port), or a PFC frame
// for a port the other part owns (PFC; Port that port, Arg its event).
// At is when it arrives, Sent when it was put on the wire.
type Export struct {
	At   sim.Time
	Sent sim.Time
	Port int32
	PFC  bool
	Arg  uint64
	Pkt  Packet
}

// SetRemote marks the ports (by id) whose far end another part owns:
// the frames they send and the PFC frames they send upstream go to
// Outbox instead of the scheduler. With failures (links may fail in the
// run) they also keep their wire's frames by arrival, to count those a
// failure of the link loses; without, a frame costs no more.
func (n *Network) SetRemote(ids []int, failures bool) {
	n.exported = make([]*ring.Ring[inFlight], len(n.Ports))
	for _, id := range ids {
		n.Ports[id].remote = true
		if failures {
			n.exported[id] = new(ring.Ring[inFlight])
		}
	}
}

// SetReplicas marks the ports (by id) that another part owns and whose
// far end this part owns: the frames they carry here are counted by
// their owner when a failure of the link loses them.
func (n *Network) SetReplicas(ids []int) {
	n.failedAt = make([]sim.Time, len(n.Ports))
	for _, id := range ids {
		n.Ports[id].replica = true
		n.failedAt[id] = -1
	}
}

// inFlight is a frame an exporting port put on its wire: when it arrives
// and its size.
type inFlight struct {
	at   sim.Time
	wire int32
}

// export puts a copy of p, sent on remote port pt, in the outbox, and p
// back in the pool. A packet's in-band telemetry goes with it, in
// OutboxINT (the copy's INT numbers it there).
func (pt *Port) export(p *Packet) {
	n := pt.net
	now := n.Sched.Now()
	if w := n.exported[pt.ID]; w != nil {
		for w.Len() > 0 && w.Peek().at < now {
			w.Pop() // arrived
		}
		w.Push(inFlight{at: p.arrival, wire: p.Wire})
	}
	n.Outbox = append(n.Outbox, Export{At: p.arrival, Sent: now, Port: int32(pt.ID)})
	x := &n.Outbox[len(n.Outbox)-1]
	x.Pkt = *p
	x.Pkt.next = nil
	if p.INT != 0 {
		n.OutboxINT = append(n.OutboxINT, *n.INT.Get(p.INT))
		x.Pkt.INT = int32(len(n.OutboxINT))
	}
	n.Pool.Put(p)
}

// exportPFC puts PFC event arg for remote port pt's peer, due at, in the
// outbox.
func (pt *Port) exportPFC(at sim.Time, arg uint64) {
	n := pt.net
	n.Outbox = append(n.Outbox, Export{At: at, Port: int32(pt.Peer.ID), PFC: true, Arg: arg})
}

// ClearOutbox empties the outbox once every part has taken in what it
// holds.
func (n *Network) ClearOutbox() {
	n.Outbox, n.OutboxINT = n.Outbox[:0], n.OutboxINT[:0]
}

// Import takes in x, exported by part from: a frame joins the wire of
// this part's copy of the sending port (whose far end is this part's),
// with its in-band telemetry; a PFC frame is scheduled for its port. A
// frame the link has failed under since it was sent is lost (counted by
// the sending part, discarded here).
func (n *Network) Import(x *Export, from *Network) {
	pt := n.Ports[x.Port]
	if x.PFC {
		n.Sched.At(x.At, pt, x.Arg)
		return
	}
	if pt.replica && n.failedAt[pt.ID] >= x.Sent {
		n.DroppedBytes += int64(x.Pkt.Wire)
		n.DroppedPackets++
		return
	}
	p := n.Pool.Get()
	*p = x.Pkt
	p.next = nil
	if x.Pkt.INT != 0 {
		p.INT = n.INT.New()
		*n.INT.Get(p.INT) = from.OutboxINT[x.Pkt.INT-1]
	}
	pt.onWire(p)
}

// EachOnWire calls f with every packet on pt's wire, in order, and when
// it arrives at the far end. A partitioned run asks it of the wires into
// its hosts, for the next delivery another part waits on.
func (pt *Port) EachOnWire(f func(p *Packet, at sim.Time)) {
	for p := pt.pipe.head; p != nil; p = p.next {
		f(p, p.arrival)
	}
}

// DeliversToHost reports whether pt's far end is a host's NIC.
func (pt *Port) DeliversToHost() bool { return pt.Peer != nil && pt.Peer.host }
