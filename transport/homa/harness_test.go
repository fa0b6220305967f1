package homa

// A tiny deterministic network for the tests: every host has an uplink of
// rate R that pulls packets from its endpoint whenever it is idle, and a
// packet arrives at its destination one propagation delay after its last bit
// left. Receivers' downlinks are not modelled (no queueing), so completion
// times are exact sums of serialization and delay.

import (
	"container/heap"

	"fabriclab/sim"
	"fabriclab/units"
)

const (
	dataOverhead = 58 // wire bytes added to a DATA payload (1442 + 58 = 1500)
	ctrlWire     = 64 // wire bytes of a control packet
)

type tevKind uint8

const (
	tevArrive tevKind = iota
	tevTxDone
	tevTimer
)

type tev struct {
	at   sim.Time
	seq  uint64
	kind tevKind
	host int32
	pkt  Packet
}

type tevHeap []tev

func (h tevHeap) Len() int { return len(h) }
func (h tevHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h tevHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *tevHeap) Push(x any)   { *h = append(*h, x.(tev)) }
func (h *tevHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type testNet struct {
	eps   []*Endpoint
	rate  units.Rate
	delay units.Duration
	now   sim.Time
	seq   uint64
	q     tevHeap
	busy  []bool
	timer []sim.Time // the time of the timer event scheduled per host
	// drop, if set, is asked about every packet put on the wire.
	drop func(Packet) bool
	// sent logs every packet put on the wire, with its time.
	sent []sentPkt
	// onEvent sees every event of every endpoint as it happens.
	onEvent func(host int32, ev Event)
	// afterReceive, if set, runs after every Receive (for invariant checks).
	afterReceive func(host int32, pk Packet)
	events       []Event
	buf          []Event
}

type sentPkt struct {
	at  sim.Time
	pkt Packet
}

func newTestNet(hosts int, p Params, rate units.Rate, delay units.Duration) *testNet {
	n := &testNet{rate: rate, delay: delay, busy: make([]bool, hosts), timer: make([]sim.Time, hosts)}
	for h := range hosts {
		n.eps = append(n.eps, NewEndpoint(int32(h), p))
		n.timer[h] = NoDeadline
	}
	return n
}

func (n *testNet) push(e tev) {
	n.seq++
	e.seq = n.seq
	heap.Push(&n.q, e)
}

func wire(pk Packet) units.Size {
	if pk.Kind == Data {
		return pk.Bytes + dataOverhead
	}
	return ctrlWire
}

// submit hands a message to host h at the current time.
func (n *testNet) submit(h int32, m Message) {
	if err := n.eps[h].Submit(n.now, m); err != nil {
		panic(err)
	}
	n.kick(h)
}

// kick starts a transmission if h's link is idle, re-arms h's timer and
// collects h's events.
func (n *testNet) kick(h int32) {
	ep := n.eps[h]
	if !n.busy[h] {
		if pk, ok := ep.NextPacket(n.now); ok {
			n.busy[h] = true
			done := n.now + units.SerializationTime(wire(pk), n.rate)
			n.push(tev{at: done, kind: tevTxDone, host: h})
			n.sent = append(n.sent, sentPkt{n.now, pk})
			if n.drop == nil || !n.drop(pk) {
				n.push(tev{at: done + n.delay, kind: tevArrive, host: pk.Dst, pkt: pk})
			}
		}
	}
	if d := ep.NextDeadline(); d != NoDeadline && d != n.timer[h] {
		n.timer[h] = d
		n.push(tev{at: max(d, n.now), kind: tevTimer, host: h})
	}
	n.buf = ep.TakeEvents(n.buf[:0])
	for _, ev := range n.buf {
		n.events = append(n.events, ev)
		if n.onEvent != nil {
			n.onEvent(h, ev)
		}
	}
}

// run processes events until the queue is empty or until is passed.
func (n *testNet) run(until sim.Time) {
	for n.q.Len() > 0 {
		if n.q[0].at > until {
			n.now = until
			return
		}
		e := heap.Pop(&n.q).(tev)
		n.now = e.at
		switch e.kind {
		case tevArrive:
			n.eps[e.host].Receive(n.now, e.pkt)
			if n.afterReceive != nil {
				n.afterReceive(e.host, e.pkt)
			}
		case tevTxDone:
			n.busy[e.host] = false
		case tevTimer:
			if n.timer[e.host] == e.at {
				n.timer[e.host] = NoDeadline
			}
			n.eps[e.host].Advance(n.now)
		}
		n.kick(e.host)
	}
}

func (n *testNet) find(kind EventKind, id MsgID) (Event, bool) {
	for _, ev := range n.events {
		if ev.Kind == kind && ev.ID == id {
			return ev, true
		}
	}
	return Event{}, false
}
