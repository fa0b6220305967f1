package tcp

import (
	"fabriclab/sim"
	"fabriclab/units"
)

// Receiver is the receiving half of one connection:
//
//	r := NewReceiver(ackEvery, ackDelay)
//	r.Expect(id, length)            // the framing: messages in stream order
//	acks = r.OnSegment(now, seg, acks[:0])   // send these ACKs now
//	r.NextDeadline(); acks = r.Advance(now, acks[:0])   // delayed-ACK timer
//	r.TakeDelivered(buf)            // messages delivered in order
//
// It acknowledges cumulatively. Out-of-order segments are kept (so packet
// spraying costs duplicate ACKs, not data) and answered at once with a
// duplicate ACK, as is a segment that fills a hole. In-order segments are
// acknowledged every ackEvery segments, or ackDelay after the first
// unacknowledged one.
//
// ECN echo follows DCTCP's receiver (§3.1 of the paper): ECE on an ACK is
// the CE mark of the segments it covers; with delayed ACKs, when the CE mark
// of an arriving segment differs from the previous one, the segments before
// it are acknowledged at once with the old ECE value, so the sender sees
// exactly which bytes were marked. With ackEvery = 1 every ACK echoes the CE
// of its own segment.
//
// A message is delivered when every byte of it and of all messages before it
// arrived: a loss early in the stream holds back every later message (the
// head-of-line blocking this transport exists to show). The receiver learns
// the framing from Expect, as an application reading length-prefixed
// messages would; the caller registers the same messages in the same order
// as it submits them to the Sender.
type Receiver struct {
	every int
	delay units.Duration
	last  sim.Time

	next units.Size // rcv.nxt: every byte below arrived
	ooo  []span     // received beyond next: sorted, disjoint, not touching next

	pending   int      // in-order segments not yet acknowledged
	pendingAt sim.Time // arrival of the first of them
	ce        bool     // CE of the latest segment (DCTCP state)
	echo      sim.Time // SentAt of the latest segment

	msgs      []framed
	head      int
	total     units.Size
	delivered []Done

	Counts RecvCounts
}

// RecvCounts are the receiver's counters for a run.
type RecvCounts struct {
	Segments, OutOfOrder, Duplicates, CE, Acks uint64
}

type span struct{ from, to units.Size }

// NewReceiver returns a receiver that acknowledges every ackEvery in-order
// segments (at least 1; 1 is the default for DCTCP simulations, which makes
// the ECN echo exact) and at most ackDelay after an unacknowledged one (used
// only when ackEvery > 1; Linux's minimum delayed-ACK time is 40 ms, data
// center stacks use far less).
func NewReceiver(ackEvery int, ackDelay units.Duration) *Receiver {
	return &Receiver{every: max(1, ackEvery), delay: ackDelay}
}

// Expect registers the next message of the stream.
func (r *Receiver) Expect(id uint64, length units.Size) {
	if length <= 0 {
		return
	}
	r.total += length
	r.msgs = append(r.msgs, framed{id: id, end: r.total})
	r.deliver(r.last)
}

// Total is the stream's length so far: every message expected.
func (r *Receiver) Total() units.Size { return r.total }

// Received is rcv.nxt: the bytes of the stream received in order.
func (r *Receiver) Received() units.Size { return r.next }

// TakeDelivered appends the messages delivered since the previous call.
func (r *Receiver) TakeDelivered(dst []Done) []Done {
	dst = append(dst, r.delivered...)
	r.delivered = r.delivered[:0]
	return dst
}

func (r *Receiver) ack(dst []Ack) []Ack {
	r.pending = 0
	r.Counts.Acks++
	return append(dst, Ack{Ack: r.next, ECE: r.ce, Echo: r.echo})
}

// OnSegment handles a data segment and appends the ACKs to send now to dst.
func (r *Receiver) OnSegment(now sim.Time, seg Segment, dst []Ack) []Ack {
	if now < r.last {
		now = r.last
	}
	r.last = now
	r.Counts.Segments++
	if seg.CE {
		r.Counts.CE++
	}
	if seg.CE != r.ce && r.pending > 0 {
		dst = r.ack(dst) // DCTCP: close the run of the old CE state
	}
	r.ce = seg.CE
	r.echo = seg.SentAt
	from, to := seg.Seq, seg.Seq+seg.Len
	switch {
	case to <= r.next:
		r.Counts.Duplicates++
		return r.ack(dst) // a retransmission we had: tell the sender at once
	case from > r.next:
		r.Counts.OutOfOrder++
		r.insert(from, to)
		return r.ack(dst) // duplicate ACK: signals the hole
	}
	r.next = to
	k := 0
	for k < len(r.ooo) && r.ooo[k].from <= r.next {
		r.next = max(r.next, r.ooo[k].to)
		k++
	}
	filled := k > 0
	if filled { // shift down, keeping the capacity (no allocation later)
		r.ooo = r.ooo[:copy(r.ooo, r.ooo[k:])]
	}
	r.deliver(now)
	if r.pending == 0 {
		r.pendingAt = now
	}
	r.pending++
	if filled || r.pending >= r.every {
		return r.ack(dst)
	}
	return dst
}

// insert adds [from, to) to the out-of-order list, merging overlaps.
func (r *Receiver) insert(from, to units.Size) {
	i := 0
	for i < len(r.ooo) && r.ooo[i].to < from {
		i++
	}
	j := i
	for j < len(r.ooo) && r.ooo[j].from <= to {
		from = min(from, r.ooo[j].from)
		to = max(to, r.ooo[j].to)
		j++
	}
	if i == j {
		r.ooo = append(r.ooo, span{})
		copy(r.ooo[i+1:], r.ooo[i:])
		r.ooo[i] = span{from, to}
		return
	}
	r.ooo[i] = span{from, to}
	r.ooo = append(r.ooo[:i+1], r.ooo[j:]...)
}

func (r *Receiver) deliver(now sim.Time) {
	for r.head < len(r.msgs) && r.msgs[r.head].end <= r.next {
		r.delivered = append(r.delivered, Done{ID: r.msgs[r.head].id, At: now})
		r.head++
	}
	if r.head == len(r.msgs) {
		r.msgs, r.head = r.msgs[:0], 0
	} else if r.head >= 64 && 2*r.head >= len(r.msgs) {
		r.msgs = r.msgs[:copy(r.msgs, r.msgs[r.head:])]
		r.head = 0
	}
}

// NextDeadline is when a delayed ACK is due, or NoDeadline.
func (r *Receiver) NextDeadline() sim.Time {
	if r.pending == 0 {
		return NoDeadline
	}
	return r.pendingAt + r.delay
}

// Advance sends the delayed ACK if it is due by now.
func (r *Receiver) Advance(now sim.Time, dst []Ack) []Ack {
	if now < r.last {
		now = r.last
	}
	r.last = now
	if r.pending > 0 && r.pendingAt+r.delay <= now {
		return r.ack(dst)
	}
	return dst
}
