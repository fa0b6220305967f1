// Package fabric models what carries packets: links, ports with eight
// priority queues, output-queued switches with a shared buffer, ECN marking,
// PFC and ECMP forwarding. Hosts plug in through the Node interface and a
// Feeder that hands the port their next packet.
//
// The per-packet path reads top to bottom: Port.trySend → wire (pipe) →
// Node.Receive → Switch.Receive picks an egress port → Port.enqueue. A port
// schedules at most one tx-done event and one arrival event (the pipe's head),
// so the event heap stays small whatever is in flight.
package fabric

import "fabriclab/sim"

// Kind is a packet's role.
type Kind uint8

// Packet kinds.
const (
	Data Kind = iota
	Ack
	Nack
	CNP
)

func (k Kind) String() string {
	switch k {
	case Data:
		return "data"
	case Ack:
		return "ack"
	case Nack:
		return "nack"
	case CNP:
		return "cnp"
	}
	return "?"
}

// Packet is one frame. Packets come from a Pool and go back to it when
// consumed or dropped; nothing on the per-packet path allocates.
//
// The fields up to INT, and enq (the next arrival on a wire), are what
// the fabric reads and writes on every hop; Msg, PSN and Hdr are the
// transport's header, which the fabric only carries (Msg is also read by
// observers such as explain mode); enqPaused is written only for an
// Observer and SentAt only by the sending host. Hdr is laid out by each
// transport (transport/roce, tcp and homa document theirs), so
// protocol-specific fields do not pile up here. The order keeps
// everything a switch touches in the first 64 bytes of the 128 a packet
// takes: a hop reads one cache line of it, not two (TestPacketLayout).
type Packet struct {
	next *Packet // intrusive FIFO / free list link

	Kind Kind
	Prio uint8
	// CE is the ECN congestion-experienced mark.
	CE bool
	// Trimmed: a switch cut the packet to its headers instead of
	// dropping it (SwitchConfig.Trimming); its payload is gone.
	Trimmed bool

	// Wire is the size on the wire including Overhead; Payload is the data
	// carried.
	Wire    int32
	Payload int32

	Src, Dst int32 // host ids
	// SrcQP and DstQP identify the connection at each end; SrcQP also acts as
	// the UDP source port, so each QP is its own 5-tuple for ECMP.
	SrcQP, DstQP int32

	inPort  int32    // ingress port index at the current switch
	arrival sim.Time // when the last bit reaches the far end of the current link
	// INT names the packet's in-band telemetry record in Network.INT
	// (index + 1; 0 = the packet collects none): switches stamp a hop
	// on it as it leaves them (HPCC). Every egress reads it, so it sits
	// in the first cache line.
	INT int32
	// Msg is the sender's message id, carried so the receiver can report
	// completion (and observers can tell messages apart).
	Msg int32
	// enq and enqPaused are when the packet joined its current egress queue
	// and how long that queue's priority had been paused by then (for
	// Observer). On a wire, where no observer reads it, enq is instead
	// the arrival time of the packet behind this one on the same wire
	// (set when that one is sent): the port schedules the next arrival
	// from the packet it delivers, which it has in the cache, rather than
	// from the next one, which has most likely left it since it was sent.
	enq, enqPaused sim.Time
	SentAt         sim.Time // when the sender put it on the wire

	// PSN is the sequence number: RoCE's packet sequence number (data) or
	// the acknowledged/expected PSN (ack/nack), TCP's sequence or
	// acknowledgement number, Homa's offset.
	PSN int64
	// Hdr is the transport's own header fields (RoCE's end-of-message mark,
	// TCP's flags and timestamp, Homa's packet type, ids and lengths). The
	// fabric never reads it.
	Hdr Header
}

// Header is the transport-specific part of a packet header: words whose
// layout the transport defines (RoCE uses one, TCP two, Homa three). Five
// words make Packet 128 bytes: two cache lines, and room to spare.
type Header [5]uint64

// Pool is a free list of packets. One simulation owns one pool.
type Pool struct {
	free *Packet
	// INT is the network's telemetry table (Network.INT), where Put
	// returns a packet's record.
	INT *INTTable
	// Live is the number of packets handed out and not yet returned.
	Live int64
	// Allocated is how many packets were ever made: the pool's high-water
	// mark, not a per-packet cost.
	Allocated int64
}

// Get returns a zeroed packet.
func (pl *Pool) Get() *Packet {
	p := pl.free
	if p == nil {
		p = new(Packet)
		pl.Allocated++
	} else {
		pl.free = p.next
		*p = Packet{}
	}
	pl.Live++
	return p
}

// Put returns p to the pool (and its telemetry record to INT).
func (pl *Pool) Put(p *Packet) {
	if p.INT != 0 {
		pl.INT.Release(p.INT)
	}
	p.next = pl.free
	pl.free = p
	pl.Live--
}

// fifo is an intrusive packet queue.
type fifo struct {
	head, tail *Packet
	n          int
}

func (q *fifo) push(p *Packet) {
	p.next = nil
	if q.tail == nil {
		q.head = p
	} else {
		q.tail.next = p
	}
	q.tail = p
	q.n++
}

func (q *fifo) pop() *Packet {
	p := q.head
	if p == nil {
		return nil
	}
	q.head = p.next
	if q.head == nil {
		q.tail = nil
	}
	p.next = nil
	q.n--
	return p
}

func (q *fifo) each(f func(*Packet)) {
	for p := q.head; p != nil; p = p.next {
		f(p)
	}
}
