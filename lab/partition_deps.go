package lab

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"fabriclab/fabric"
	"fabriclab/scenario"
	"fabriclab/sim"
	"fabriclab/transport/homa"
	"fabriclab/transport/roce"
	"fabriclab/transport/uet"
	"fabriclab/workload"
)

// Deliveries that other parts wait on (a pairwise all-to-all's rank waits
// on its own send's delivery, a collective's next iteration on the last).
// A message is delivered where its receiver runs, and the executor of the
// part that sends what waits on it must hear it at that very time. So the
// part that delivers it sends the delivery (its message and time) to
// those parts at the window's end, where it is scheduled at its time; and
// no window may end after such a delivery could happen: at the earliest
// last packet of such a message on a wire into the part's hosts (an
// in-order RoCE receiver delivers a message on its last packet, a TCP
// receiver on the segment that carries its last byte; one that takes
// packets out of order, and UET's and Homa's, may complete one on
// another packet if the last came before it: then on any packet of that
// message, of its RoCE queue pair, or of its TCP connection, where a
// segment that fills a hole completes the messages after it), a wire's
// delay after
// the window's start for those not on such a wire yet, and at the
// earliest delivery taken in (or marker's earliest start) not yet run
// that releases a marker other parts wait on (delivered that instant).

// crossing is a part's share of that.
type crossing struct {
	relevant []bool              // by message: another part waits on its delivery
	owner    func(msg int32) int // the part that sends a message
	// last names the relevant message p is the last packet of (ok
	// false: none): the receiver needs it before it can complete the
	// message. Over TCP it is the segment that carries the message's
	// last byte, found from where the message ends in its stream (ends,
	// by connection at the receiver, in stream order).
	last func(p *fabric.Packet) (msg int32, ok bool)
	ends map[holdKey][]streamEnd
	// With receivers that take packets out of order (outOfOrder), a
	// message whose last packet came before others completes on another:
	// one of its own, for RoCE one of its queue pair's (the receiver
	// completes a queue pair's messages in order), for TCP one of its
	// connection's (a segment that fills a hole). hold is what a
	// straggling message waits on, as its packets name it. lastOnWire
	// holds the last packets of relevant messages on the wires into this
	// part's hosts at the last window's end; straggling the relevant
	// messages whose last packet has come and that are not delivered
	// yet, with what they wait on, and stragglingOn how many wait on
	// each (markStragglers).
	hold         func(*fabric.Packet) holdKey
	outOfOrder   bool
	lastOnWire   []lastPacket
	spare        []lastPacket // lastOnWire's other buffer
	straggling   map[int32]holdKey
	stragglingOn map[holdKey]int
	stragglers   int            // messages found straggling, for tests
	into         []*fabric.Port // the wires into this part's hosts that such packets take
	// hostDelay is the shortest of the wires into the hosts that receive
	// such messages, in the whole fabric (−1: none).
	hostDelay sim.Time
	// releases marks the messages whose delivery releases a marker
	// another part waits on (delivered that instant); pending holds the
	// times of such deliveries taken in, and of such markers' earliest
	// starts, not yet run.
	releases []bool
	out      []crossDelivery // this window's deliveries, for other parts
	pending  timeHeap
}

// crossDelivery is message msg delivered at at, for part to.
type crossDelivery struct {
	msg int32
	at  sim.Time
	to  int
}

// crossDependencies marks the messages another part waits on: those whose
// successors another part sends (hostPart: a host's part; a message is
// delivered in its receiver's part, a marker in its host's), and those
// that release a marker another part waits on (a marker is delivered the
// moment its last dependency is). Nil when no part waits on another.
func crossDependencies(d *workload.DAG, hostPart func(h int32) int) []bool {
	var rel []bool
	mark := func(i int) {
		if rel == nil {
			rel = make([]bool, len(d.Msgs))
		}
		rel[i] = true
	}
	for i := range d.Msgs {
		at := hostPart(d.Msgs[i].Dst)
		for _, j := range d.Successors(int32(i)) {
			if hostPart(d.Msgs[j].Src) != at {
				mark(i)
				break
			}
		}
	}
	for changed := rel != nil; changed; {
		changed = false
		for i := range d.Msgs {
			if rel[i] {
				continue
			}
			for _, j := range d.Successors(int32(i)) {
				if d.Msgs[j].Marker && rel[j] {
					rel[i], changed = true, true
					break
				}
			}
		}
	}
	return rel
}

// crossParts sets part k up to send and take in the deliveries other
// parts wait on, if any do.
func (s *Sim) crossParts(k int, partOf []int) error {
	net := s.Topo.Net
	hostPart := func(h int32) int { return partOf[net.HostPorts[h].ID] }
	rel := crossDependencies(s.DAG, hostPart)
	if rel == nil {
		return nil
	}
	spec := s.Job.Spec
	c := &crossing{relevant: rel, hostDelay: -1,
		owner:    func(m int32) int { return hostPart(s.DAG.Msgs[m].Src) },
		releases: make([]bool, len(rel)), straggling: map[int32]holdKey{}, stragglingOn: map[holdKey]int{}}
	lastOf := func(last func(*fabric.Packet) bool) func(*fabric.Packet) (int32, bool) {
		return func(p *fabric.Packet) (int32, bool) { return p.Msg, last(p) && c.relevantPacket(p) }
	}
	byMessage := func(p *fabric.Packet) holdKey { return holdKey{-1, p.Msg} }
	byConnection := func(p *fabric.Packet) holdKey { return holdKey{p.Dst, p.DstQP} }
	switch kind := scenario.TransportOf(spec).Name; kind {
	case "roce":
		c.last, c.outOfOrder, c.hold = lastOf(roce.LastOfMessage), spec.NIC.OutOfOrder == "accept", byConnection
	case "uet":
		c.last, c.outOfOrder, c.hold = lastOf(uet.LastOfMessage), true, byMessage
	case "homa":
		c.last, c.outOfOrder, c.hold = lastOf(homa.LastOfMessage), true, byMessage
	case "dctcp", "tcp":
		// A segment that fills a hole completes the messages behind it,
		// whichever segment carried their last bytes: a connection's.
		c.ends = map[holdKey][]streamEnd{}
		c.last, c.outOfOrder, c.hold = func(p *fabric.Packet) (int32, bool) { return c.lastSegment(p, s.end) }, true, byConnection
	default:
		return fmt.Errorf("messages wait on deliveries in other parts (a rank waits on its own sends' delivery, as pairwise all-to-all and collectives of several iterations do), which parts do not follow over %s", kind)
	}
	// The hosts that receive messages other parts wait on: only the wires
	// into them bound the windows (a scale-up domain's wires, often
	// without delay, need not).
	receives := map[*fabric.Port]bool{}
	for i, r := range rel {
		m := &s.DAG.Msgs[i]
		if r && !m.Marker {
			receives[net.HostPorts[m.Dst]] = true
		}
		for _, j := range s.DAG.Successors(int32(i)) {
			c.releases[i] = c.releases[i] || s.DAG.Msgs[j].Marker && rel[j]
		}
	}
	for _, pt := range net.Ports {
		if !pt.DeliversToHost() || !receives[pt.Peer] {
			continue
		}
		if c.hostDelay < 0 || pt.Delay < c.hostDelay {
			c.hostDelay = pt.Delay
		}
		if partOf[pt.Peer.ID] == k {
			c.into = append(c.into, pt)
		}
	}
	s.cross = c
	return nil
}

// timedMarker notes that marker m, which other parts may wait on, starts
// at its earliest start at (a releaser's event): it bounds the windows
// as a delivery taken in does.
func (s *Sim) timedMarker(m int32, at sim.Time) {
	if s.relevantMarker(m) {
		heap.Push(&s.cross.pending, at)
	}
}

// markerStarted is timedMarker's counterpart, when the releaser runs.
func (s *Sim) markerStarted(m int32) {
	if s.relevantMarker(m) {
		heap.Pop(&s.cross.pending)
	}
}

// relevantMarker reports whether m is a marker other parts wait on.
func (s *Sim) relevantMarker(m int32) bool {
	return s.cross != nil && s.cross.relevant[m] && s.DAG.Msgs[m].Marker
}

// sendDelivery notes that message i, delivered here at now, is waited on
// by other parts: once for each part that sends one of its successors.
func (s *Sim) sendDelivery(i int32, now sim.Time) {
	c := s.cross
	if c == nil || !c.relevant[i] {
		return
	}
	first := len(c.out)
	for _, j := range s.DAG.Successors(i) {
		to := c.owner(j)
		if to == s.part {
			continue
		}
		dup := false
		for _, r := range c.out[first:] {
			dup = dup || r.to == to
		}
		if !dup {
			c.out = append(c.out, crossDelivery{msg: i, at: now, to: to})
		}
	}
}

// takeDeliveries takes in, as part k, the deliveries the other parts sent
// it (into buf, returned for its room), in order of time, then sending
// part and order of sending.
func (s *Sim) takeDeliveries(k int, sims []*Sim, buf []crossDelivery) []crossDelivery {
	for _, o := range sims {
		for _, r := range o.cross.out {
			if r.to == k {
				buf = append(buf, r)
			}
		}
	}
	slices.SortStableFunc(buf, func(a, b crossDelivery) int { return cmp.Compare(a.at, b.at) })
	for _, r := range buf {
		s.takeDelivery(r)
	}
	return buf
}

// takeDelivery schedules a delivery another part sent at its time, which
// this part has not passed (the windows end before it could).
func (s *Sim) takeDelivery(r crossDelivery) {
	if now := s.Sched.Now(); r.at < now {
		panic(fmt.Sprintf("lab: part %d took in message %d's delivery at %v after running to %v (a bug: please report it with the scenario)", s.part, r.msg, r.at, now))
	}
	if s.cross.releases[r.msg] {
		heap.Push(&s.cross.pending, r.at)
	}
	s.Sched.At(r.at, (*remoteDelivery)(s), uint64(r.msg))
}

// remoteDelivery runs a delivery another part sent: the executor hears
// it, and this part starts what it releases.
type remoteDelivery Sim

func (r *remoteDelivery) OnEvent(now sim.Time, msg uint64) {
	s := (*Sim)(r)
	if s.cross.releases[msg] {
		heap.Pop(&s.cross.pending)
	}
	s.startAll(s.exec.Delivered(int32(msg), now), now)
}

// nextCrossing is the earliest time this part could deliver a message
// another part waits on, among what it knows now: a packet on a wire into
// its hosts that could complete one (a message's last packet, or a packet
// a straggling one waits on), or a delivery taken in (or a marker's
// earliest start) not yet run that releases such a marker (−1: none). One
// pass over those wires also notes the last packets on them, for the
// stragglers at the next window's end.
func (s *Sim) nextCrossing() sim.Time {
	c := s.cross
	next := sim.Time(-1)
	if len(c.pending) > 0 {
		next = c.pending[0]
	}
	if c.outOfOrder {
		c.markStragglers(s.end, s.Sched.Now())
	}
	seen := c.spare[:0]
	for _, pt := range c.into {
		pt.EachOnWire(func(p *fabric.Packet, at sim.Time) {
			if p.Kind != fabric.Data {
				return
			}
			m, last := c.last(p)
			waited := false
			if c.outOfOrder && (last || len(c.stragglingOn) > 0) {
				h := c.hold(p)
				if last {
					seen = append(seen, lastPacket{m, h, at})
				}
				waited = c.stragglingOn[h] > 0
			}
			if (last || waited) && (next < 0 || at < next) {
				next = at
			}
		})
	}
	c.lastOnWire, c.spare = seen, c.lastOnWire
	return next
}

// streamEnd is where a relevant message ends in its TCP stream.
type streamEnd struct {
	msg int32
	end int64
}

// lastSegment names the last relevant message whose last byte segment p
// carries (end: this part's delivery times, to drop the delivered ones,
// which come first: a stream delivers in order).
func (c *crossing) lastSegment(p *fabric.Packet, end []sim.Time) (int32, bool) {
	if p.Kind != fabric.Data {
		return -1, false
	}
	k := holdKey{p.Dst, p.DstQP}
	ends := c.ends[k]
	if len(ends) == 0 {
		return -1, false
	}
	if end[ends[0].msg] >= 0 {
		for len(ends) > 0 && end[ends[0].msg] >= 0 {
			ends = ends[1:]
		}
		if len(ends) == 0 {
			delete(c.ends, k)
			return -1, false
		}
		c.ends[k] = ends
	}
	msg, ok := int32(-1), false
	for _, e := range ends {
		if e.end > p.PSN+int64(p.Payload) {
			break
		}
		if e.end > p.PSN {
			msg, ok = e.msg, true
		}
	}
	return msg, ok
}

// relevantPacket reports whether p belongs to a message another part
// waits on.
func (c *crossing) relevantPacket(p *fabric.Packet) bool {
	return p.Msg >= 0 && int(p.Msg) < len(c.relevant) && c.relevant[p.Msg]
}

// holdKey is what a straggling message waits on, as its packets name it:
// for RoCE its queue pair at the receiver and for TCP its connection
// there (the receiving host and its number for it; RoCE's sender's is
// the UDP source port, which an entropy planner may change), for UET and
// Homa the message itself (host −1, id its number).
type holdKey struct{ host, id int32 }

// lastPacket is a relevant message's last packet seen on a wire into a
// host: what its message would wait on, straggling, and when it arrives.
type lastPacket struct {
	msg  int32
	hold holdKey
	at   sim.Time
}

// markStragglers, at a window's end (now), marks the relevant messages
// whose last packet has come to a receiver that takes packets out of
// order while the message is not delivered (end: this part's delivery
// times, −1 for none): a packet of it, or of an earlier message of its
// RoCE queue pair or TCP connection, is still to come. A last packet is
// on its wire into the host at some window's end before it arrives (a
// window ends no later than such a wire's delay after it starts, and a
// frame takes at least a picosecond), so each is seen there (lastOnWire,
// noted by nextCrossing), with its arrival, and has come by a later
// window's end past that time (even if a copy resent is on the wire
// then). Messages delivered since are no longer waited for.
func (c *crossing) markStragglers(end []sim.Time, now sim.Time) {
	for m, h := range c.straggling {
		if end[m] >= 0 {
			delete(c.straggling, m)
			if c.stragglingOn[h]--; c.stragglingOn[h] == 0 {
				delete(c.stragglingOn, h)
			}
		}
	}
	for _, l := range c.lastOnWire {
		if _, ok := c.straggling[l.msg]; !ok && l.at <= now && end[l.msg] < 0 {
			c.straggling[l.msg] = l.hold
			c.stragglingOn[l.hold]++
			c.stragglers++
		}
	}
}

// timeHeap is a min-heap of times.
type timeHeap []sim.Time

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(sim.Time)) }
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
