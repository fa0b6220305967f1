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
type Packet struct {
	next *Packet // intrusive FIFO / free list link

	Kind Kind
	Prio uint8
	// CE is the ECN congestion-experienced mark.
	CE bool
	// Last marks the final packet of a message.
	Last bool

	// Wire is the size on the wire including Overhead; Payload is the data
	// carried.
	Wire    int32
	Payload int32

	Src, Dst int32 // host ids
	// SrcQP and DstQP identify the connection at each end; SrcQP also acts as
	// the UDP source port, so each QP is its own 5-tuple for ECMP.
	SrcQP, DstQP int32
	// PSN is the packet sequence number (data) or the acknowledged/expected
	// PSN (ack/nack).
	PSN int64
	// Msg is the sender's message index, carried so the receiver can report
	// completion.
	Msg int32

	// Header fields of the other transports (Homa, TCP); RoCE leaves them
	// zero. The fabric never reads them.
	//
	// Sub is the transport's own packet type (Homa: DATA, GRANT, …), Flags
	// its flag bits, Aux a small field (Homa: the granted priority).
	Sub, Flags, Aux uint8
	// Client is the host that started an RPC (Homa's message id is
	// client, RPC number and direction).
	Client int32
	// MsgLen is the length of the whole message (Homa DATA and PROBE).
	MsgLen int64
	// Range is a byte count other than the payload (Homa RESEND).
	Range int64
	// Echo is a timestamp the receiver sends back (TCP's timestamp option).
	Echo sim.Time

	inPort  int32    // ingress port index at the current switch
	arrival sim.Time // when the last bit reaches the far end of the current link
	// enq and enqPaused are when the packet joined its current egress queue
	// and how long that queue's priority had been paused by then (for
	// Observer).
	enq, enqPaused sim.Time
	SentAt         sim.Time // when the sender put it on the wire
}

// Pool is a free list of packets. One simulation owns one pool.
type Pool struct {
	free *Packet
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

// Put returns p to the pool.
func (pl *Pool) Put(p *Packet) {
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
