package roce

import "fabriclab/sim"

// Receiver is the receiving half of one queue pair, a pure state machine
// like Sender: every data packet is one input, and the answer says what the
// NIC must do about it.
//
//	r.Init(&cfg)                               // or NewReceiver
//	reply, done = r.OnData(now, &d, done[:0])  // a data packet arrived
//
// The NIC then, in this order, sends a CNP if reply.CNP, counts
// reply.Payload as delivered, reports the messages appended to done
// (completed by this packet, in PSN order), and sends the ACK or NACK of
// reply.Control for reply.PSN. Nothing allocates once the reorder buffer
// and the list of pending message ends have grown to their working size.
//
// # In order (go-back-N, the default)
//
// The packet with the expected PSN is accepted: expected moves on, its
// payload is delivered, and the last packet of a message completes it. An
// ACK for the new expected PSN goes back every Config.AckEvery accepted
// packets and at every message end. A packet beyond expected is dropped
// and counted out of order; the first one after an accepted packet draws
// a NACK for expected (one NACK per gap: the sender goes back to it). A
// packet below expected is a duplicate: it is re-acknowledged so that the
// sender stops resending it.
//
// # Out of order (Config.AcceptOutOfOrder)
//
// As NICs built for spraying and adaptive routing do, a packet above the
// expected PSN is held in a reorder buffer (counted out of order; Held says
// how many are held) and its payload delivered; the expected PSN then jumps
// over everything held, and a message completes once all its packets are
// in. Acknowledgements stay cumulative (every AckEvery packets in order, and
// whenever messages complete); a held packet draws none, and there are no
// NACKs (a gap is normal here; a loss is repaired by the sender's timeout).
// A packet below expected or already held is a duplicate and draws an ACK.
//
// # CNPs (DCQCN's notification point)
//
// With Config.DCQCN.Enabled, a CE-marked data packet (duplicates included)
// draws a CNP unless one was sent for this QP less than
// Config.DCQCN.CNPInterval before (min_time_between_cnps).
type Receiver struct {
	cfg        *Config
	cnpPending bool // CNPOnAck: a notification waits for the next ACK or NACK
	expected   int64
	nacked     bool // a NACK for expected is outstanding
	sinceAck   int
	lastCNP    sim.Time
	cnpSent    bool

	// Out-of-order acceptance: packets above expected held in the reorder
	// buffer, and the message ends seen but not yet reached in order.
	held     heldSet
	nHeld    int64
	lastsDue []msgEnd
}

// Control is the acknowledgement a receiver sends for a data packet.
type Control uint8

// Controls.
const (
	NoControl Control = iota
	SendAck
	SendNack
)

// Reply is what the NIC does about one data packet (see Receiver).
type Reply struct {
	// CNP: send a congestion notification first.
	CNP bool
	// ControlCNP: the ACK or NACK carries the congestion notification
	// (Config.CNPOnAck) instead of a CNP frame of its own.
	ControlCNP bool
	// OutOfOrder: the packet arrived beyond the expected PSN.
	OutOfOrder bool
	// Control and PSN: the acknowledgement to send last, for the next PSN
	// expected.
	Control Control
	PSN     int64
	// Payload is the bytes newly received.
	Payload int32
}

type msgEnd struct {
	psn int64
	msg int32
}

// NewReceiver returns a receiver; cfg is shared, not copied.
func NewReceiver(cfg *Config) *Receiver {
	r := new(Receiver)
	r.Init(cfg)
	return r
}

// Init (re)initialises r in place.
func (r *Receiver) Init(cfg *Config) { *r = Receiver{cfg: cfg} }

// Expected is the next PSN expected in order.
func (r *Receiver) Expected() int64 { return r.expected }

// Held is the number of packets in the reorder buffer.
func (r *Receiver) Held() int64 { return r.nHeld }

// OnData handles data packet d arriving at now (d is read, not kept). It
// appends the messages it completes to done and returns the extended slice.
//
// With Config.CNPOnAck a notification sends no frame: it rides on the
// next ACK or NACK this QP sends (this packet's, or a later one's).
func (r *Receiver) OnData(now sim.Time, d *Data, done []int32) (Reply, []int32) {
	rp, done := r.onData(now, d, done)
	if r.cfg.CNPOnAck {
		if rp.CNP {
			rp.CNP, r.cnpPending = false, true
		}
		if r.cnpPending && rp.Control != NoControl {
			rp.ControlCNP, r.cnpPending = true, false
		}
	}
	return rp, done
}

func (r *Receiver) onData(now sim.Time, d *Data, done []int32) (Reply, []int32) {
	cfg := r.cfg
	var rp Reply
	if d.CE && cfg.DCQCN.Enabled && (!r.cnpSent || now-r.lastCNP >= cfg.DCQCN.CNPInterval) {
		r.cnpSent = true
		r.lastCNP = now
		rp.CNP = true
	}
	if cfg.AcceptOutOfOrder {
		return r.anyOrder(d, rp, done)
	}
	switch {
	case d.PSN == r.expected:
		r.expected++
		r.nacked = false
		rp.Payload = d.Payload
		r.sinceAck++
		if d.Last {
			done = append(done, d.Msg)
		}
		if r.sinceAck >= cfg.AckEvery || d.Last {
			r.sinceAck = 0
			rp.Control, rp.PSN = SendAck, r.expected
		}
	case d.PSN > r.expected:
		rp.OutOfOrder = true
		if !r.nacked {
			r.nacked = true
			rp.Control, rp.PSN = SendNack, r.expected
		}
	default:
		rp.Control, rp.PSN = SendAck, r.expected // a duplicate
	}
	return rp, done
}

func (r *Receiver) anyOrder(d *Data, rp Reply, done []int32) (Reply, []int32) {
	if d.PSN < r.expected || r.held.has(r.expected, d.PSN) {
		rp.Control, rp.PSN = SendAck, r.expected // a duplicate
		return rp, done
	}
	rp.Payload = d.Payload
	if d.Last {
		// Keep message ends sorted by PSN (they arrive nearly in order).
		k := len(r.lastsDue)
		r.lastsDue = append(r.lastsDue, msgEnd{})
		for k > 0 && r.lastsDue[k-1].psn > d.PSN {
			r.lastsDue[k] = r.lastsDue[k-1]
			k--
		}
		r.lastsDue[k] = msgEnd{d.PSN, d.Msg}
	}
	if d.PSN > r.expected {
		rp.OutOfOrder = true
		r.held.set(r.expected, d.PSN)
		r.nHeld++
		return rp, done
	}
	r.expected++
	for r.held.has(r.expected, r.expected) {
		r.held.clear(r.expected)
		r.nHeld--
		r.expected++
	}
	k := 0
	for k < len(r.lastsDue) && r.lastsDue[k].psn < r.expected {
		done = append(done, r.lastsDue[k].msg)
		k++
	}
	if k > 0 {
		r.lastsDue = append(r.lastsDue[:0], r.lastsDue[k:]...)
	}
	r.sinceAck++
	if r.sinceAck >= r.cfg.AckEvery || k > 0 {
		r.sinceAck = 0
		rp.Control, rp.PSN = SendAck, r.expected
	}
	return rp, done
}

// heldSet is a ring bitmap of PSNs at or above a base (the receiver's
// expected PSN); it grows when a packet lands beyond its reach.
type heldSet struct{ bits []uint64 }

func (h *heldSet) span() int64 { return int64(len(h.bits)) * 64 }

func (h *heldSet) has(base, psn int64) bool {
	if psn < base || psn-base >= h.span() {
		return false
	}
	i := psn & (h.span() - 1)
	return h.bits[i>>6]&(1<<(i&63)) != 0
}

func (h *heldSet) set(base, psn int64) {
	for psn-base >= h.span() {
		old := *h
		h.bits = make([]uint64, max(16, 2*len(old.bits)))
		for q := base; q < base+old.span(); q++ {
			if old.has(base, q) {
				h.set(base, q)
			}
		}
	}
	i := psn & (h.span() - 1)
	h.bits[i>>6] |= 1 << (i & 63)
}

func (h *heldSet) clear(psn int64) {
	i := psn & (h.span() - 1)
	h.bits[i>>6] &^= 1 << (i & 63)
}
