// Package roce is the RoCEv2 reliable-connection transport: queue pairs
// that segment messages into MTU packets, a per-QP rate limiter driven by
// DCQCN, cumulative ACKs, NACK + go-back-N on loss, a retransmission
// timeout, and CNP generation at the receiver.
//
// The protocol is pure state machines: a QP's Sender (sender.go: segmentation,
// go-back-N, the retransmission timeout, pacing, and the DCQCN reaction point
// of dcqcn.go) and its Receiver (receiver.go: expected PSN, ACK/NACK, the
// reorder buffer, CNP pacing). This file is the I/O around them: packets in
// and out of a host NIC, the NIC's round-robin of QPs, and the timers.
package roce

import (
	"fabriclab/fabric"
	"fabriclab/internal/ring"
	"fabriclab/sim"
	"fabriclab/transport/nic"
	"fabriclab/units"
)

// Config holds the NIC/transport settings shared by every host.
type Config struct {
	MTU         int32 // payload bytes per data packet
	Overhead    int32 // wire bytes added per packet
	AckEvery    int   // ack every n-th in-order packet (and every message end)
	RTO         sim.Time
	MaxInflight int64 // unacked bytes per QP; 0 = no cap
	// AcceptOutOfOrder makes receivers hold out-of-order packets in a
	// reorder buffer instead of dropping them and asking for go-back-N.
	AcceptOutOfOrder bool
	// Burst is how many packets a QP sends back to back before the NIC's
	// round-robin moves to the next QP (real NICs serve work requests in
	// chunks, which is what makes all-to-all bursty at receivers).
	Burst    int
	DataPrio uint8
	CtrlPrio uint8
	DCQCN    DCQCNParams
	// HPCC, when enabled, replaces DCQCN (which must then be off): data
	// packets collect in-band telemetry, ACKs echo it, the sender sets
	// its rate and window from it.
	HPCC HPCCParams
	// ControlWire is the wire size of ACK, NACK and CNP frames (0 =
	// DefaultControlWire).
	ControlWire int32
	// CNPOnAck carries congestion notifications as a flag on ACKs and
	// NACKs instead of CNP frames of their own.
	CNPOnAck bool
	// ActiveQPs > 0 keeps at most that many of a NIC's QPs in service at
	// once, as a collective library's channels or a NIC's send scheduler
	// do; the others wait their turn, first come first served. A QP in
	// service keeps its slot for a burst of Burst packets (or until it has
	// sent everything posted to it), then goes to the back of the line; a
	// QP held back by its rate limiter keeps its slot meanwhile, idle. 0 =
	// every QP with data shares the NIC's round-robin and a rate-limited
	// QP leaves its share to the others.
	ActiveQPs int
}

// Packets: data is fabric.Data with PSN, Msg (the caller's message id),
// SrcQP and DstQP (the QP numbers at each end: the 5-tuple ECMP hashes) and
// RoCE's own header word fabric.Packet.Hdr[0], whose bit hdrLast marks a
// message's last packet (the BTH's "last" opcode). ACK, NACK and CNP are
// fabric.Ack, Nack and CNP with PSN the acknowledged (next expected) PSN
// and the QP numbers swapped.
const hdrLast = 1 << 0

// hdrCNP on an ACK or NACK carries a congestion notification (CNPOnAck).
const hdrCNP = 1 << 1

// DefaultControlWire is the wire size of ACK, NACK and CNP frames when
// Config leaves it 0: a minimum Ethernet frame plus preamble and
// inter-frame gap.
const DefaultControlWire = 84

// Transport is the RoCE layer of every host of one simulation. Its shell
// (transport/nic) holds the NICs, OnDelivered (called when the last byte of
// a message reaches its receiver in order, or with AcceptOutOfOrder when
// its every packet is in) and DeliveredPayload (payload bytes received in
// order, or held in the reorder buffer: progress).
type Transport struct {
	nic.Shell[*NIC]
	cfg  Config
	done []int32 // scratch: messages completed by one packet
}

// New attaches a RoCE NIC to every host of net.
func New(net *fabric.Network, cfg Config) *Transport {
	if cfg.AckEvery < 1 {
		cfg.AckEvery = 1
	}
	if cfg.Burst < 1 {
		cfg.Burst = 1
	}
	if cfg.ControlWire <= 0 {
		cfg.ControlWire = DefaultControlWire
	}
	t := &Transport{cfg: cfg}
	t.Attach(net, func(_ int, pt *fabric.Port) *NIC {
		return &NIC{t: t, lineRate: pt.Rate, dcqcn: t.cfg.DCQCN.ForLine(max(pt.Rate, 0))}
	})
	return t
}

// QP is a handle to one connection (sender side at Src).
type QP struct {
	Src, Dst int32
	idx      int32
}

// Connect creates a new reliable connection from src to dst. Each QP is its
// own 5-tuple, so ECMP may place QPs of one host pair on different paths.
func (t *Transport) Connect(src, dst int) QP {
	s, d := t.NICs[src], t.NICs[dst]
	ri := int32(len(d.recv))
	d.recv = append(d.recv, recvQP{src: int32(src)})
	d.recv[ri].Init(&t.cfg)
	si := int32(len(s.send))
	q := &sendQP{nic: s, idx: si, dst: int32(dst), peer: ri, entropy: si}
	q.Sender.InitShared(&t.cfg, s.lineRate, &s.dcqcn)
	if t.cfg.HPCC.Enabled && t.cfg.HPCC.BaseRTT == 0 {
		q.Sender.SetBaseRTT(t.Net.BaseRTT(src, dst, t.cfg.MTU+t.cfg.Overhead, t.cfg.ControlWire))
	}
	s.send = append(s.send, q)
	d.recv[ri].peer = si
	return QP{Src: int32(src), Dst: int32(dst), idx: si}
}

// Tuple is the 5-tuple fields a data packet of qp carries (source and
// destination host, its UDP source port and the destination QP number),
// which is what ECMP hashes.
func (t *Transport) Tuple(qp QP) (src, dst, sqp, dqp int32) {
	q := t.NICs[qp.Src].send[qp.idx]
	return qp.Src, qp.Dst, q.entropy, q.peer
}

// SetEntropy sets the UDP source port qp's packets carry (by default its
// QP number): what an entropy planner chooses (nic.entropy: qp-aware).
func (t *Transport) SetEntropy(qp QP, port int32) { t.NICs[qp.Src].send[qp.idx].entropy = port }

// Post queues a message of bytes on qp; msg is the caller's id reported by
// OnDelivered.
func (t *Transport) Post(qp QP, msg int32, bytes int64) {
	q := t.NICs[qp.Src].send[qp.idx]
	q.Post(msg, bytes)
	q.nic.activate(q)
}

// Sender and Receiver expose qp's state machines (read-only use: tests and
// diagnostics).
func (t *Transport) Sender(qp QP) *Sender { return &t.NICs[qp.Src].send[qp.idx].Sender }

// Receiver is qp's receiving half (see Sender).
func (t *Transport) Receiver(qp QP) *Receiver {
	q := t.NICs[qp.Src].send[qp.idx]
	return &t.NICs[qp.Dst].recv[q.peer].Receiver
}

// NIC is one host adapter: it owns the host's port, its sending QPs
// (scheduled round-robin, paced by their rate limiters) and the receive
// state of connections that end here. Its counters (C) are Retransmits
// (data packets sent again), Timeouts, NACKs (received), CNPs (sent),
// OutOfOrder (data packets beyond the expected PSN) and ReorderMaxPackets.
type NIC struct {
	nic.Host
	t        *Transport
	lineRate units.Rate
	// dcqcn is the DCQCN parameters capped for lineRate, which every QP
	// sending from this NIC shares (ReactionPoint.InitShared).
	dcqcn DCQCNParams
	send  []*sendQP
	recv  []recvQP

	active  ring.Ring[*sendQP] // QPs with data that may be ready to send
	waiting qpHeap             // QPs held back by their rate limiter, by SendAt
	wake    sim.Timer          // the pending wake event for rate-limited QPs
	// burstQP is the QP in the middle of a burst of Config.Burst packets
	// (it stays at the front of the round-robin until the burst ends).
	burstQP   *sendQP
	burstLeft int

	// Send slots (Config.ActiveQPs > 0): slots is how many QPs hold one,
	// slotWait the QPs with data waiting for one, in the order they asked.
	slots    int
	slotWait ring.Ring[*sendQP]
}

// sendQP is the sending half of a QP: its Sender and the NIC's state
// around it (place in the round-robin or the waiting heap, timers).
type sendQP struct {
	nic  *NIC
	idx  int32
	dst  int32
	peer int32 // receiver's QP index
	// entropy is the UDP source port of its packets (the QP number unless
	// SetEntropy chose another).
	entropy int32

	// The flags side by side, so that they share one word: a QP is 352
	// bytes, a size class of its own (with padding between them, 384).
	inActive bool
	slot     bool // holds one of the NIC's send slots (Config.ActiveQPs)
	slotWait bool // is in the NIC's queue for a send slot
	heapIdx  int  // 1 + index in the NIC's waiting heap, 0 if not there

	rto  sim.Timer // the retransmission timer's pending event
	rate sim.Timer // the pending event of DCQCN's timers

	Sender // last: its hot fields first, the reaction point at the end
}

// recvQP is the receiving half of a QP.
type recvQP struct {
	Receiver
	src  int32
	peer int32 // sender's QP index
}

// QP timer kinds.
const (
	tmRTO = iota + 1
	tmDCQCN
)

// activate puts q in the round-robin when it has something to send.
func (n *NIC) activate(q *sendQP) {
	if q.inActive || q.heapIdx > 0 || !q.CanSend() {
		return
	}
	if lim := n.t.cfg.ActiveQPs; lim > 0 && !q.slot {
		if n.slots >= lim {
			if !q.slotWait {
				q.slotWait = true
				n.slotWait.Push(q)
			}
			return
		}
		q.slot = true
		n.slots++
	}
	q.inActive = true
	n.active.Push(q)
	n.Port.Kick()
}

// endTurn takes q out of service after its burst (Config.ActiveQPs): q
// goes to the back of the line if it has more to send, and the QPs at the
// front of the line take the free slots.
func (n *NIC) endTurn(q *sendQP) {
	q.slot = false
	n.slots--
	if q.CanSend() {
		q.slotWait = true
		n.slotWait.Push(q)
	}
	for n.slotWait.Len() > 0 && n.slots < n.t.cfg.ActiveQPs {
		w := n.slotWait.Pop()
		w.slotWait = false
		if w.inActive || w.heapIdx > 0 || !w.CanSend() {
			continue // it asks again when it can send
		}
		w.slot = true
		n.slots++
		w.inActive = true
		n.active.Push(w)
	}
}

// Pull implements fabric.Feeder: the next data packet, round-robin over
// ready QPs, respecting PFC pause of the data class and each QP's pacing.
func (n *NIC) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	cfg := &n.t.cfg
	if pt.Paused(cfg.DataPrio) {
		return nil
	}
	for n.waiting.len() > 0 && n.waiting.min().SendAt() <= now {
		q := n.waiting.pop()
		if q.CanSend() {
			q.inActive = true
			n.active.Push(q)
		}
	}
	for tries := n.active.Len(); tries > 0; tries-- {
		q := n.active.Pop()
		q.inActive = false
		if !q.CanSend() {
			continue
		}
		if q.SendAt() > now {
			n.waiting.push(q)
			continue
		}
		p := q.packet(now)
		if n.burstQP != q {
			n.burstQP, n.burstLeft = q, cfg.Burst
		}
		n.burstLeft--
		if q.slot && (n.burstLeft == 0 || q.allSent()) {
			n.burstQP = nil
			n.endTurn(q)
			return p
		}
		if q.CanSend() {
			q.inActive = true
			if n.burstLeft > 0 {
				n.active.PushFront(q) // its burst goes on
			} else {
				n.active.Push(q)
				n.burstQP = nil
			}
		} else {
			n.burstQP = nil
		}
		return p
	}
	n.scheduleWake(now)
	return nil
}

// Idle implements fabric.Feeder: with no QP in the round-robin and
// none waiting for its rate limiter, Pull finds nothing and changes
// nothing. A QP gets into either only through activate, which kicks the
// port, or through Pull itself.
func (n *NIC) Idle() bool { return n.active.Len() == 0 && n.waiting.len() == 0 }

// allSent reports whether q has sent every packet posted to it (a
// rewind may make it send some again).
func (q *sendQP) allSent() bool {
	_, nxt, end := q.PSNs()
	return nxt >= end
}

// scheduleWake makes sure the NIC looks again when the earliest
// rate-limited QP may send.
func (n *NIC) scheduleWake(now sim.Time) {
	if n.waiting.len() == 0 {
		return
	}
	at := n.waiting.min().SendAt()
	if at <= now {
		n.Port.Kick()
		return
	}
	n.wake.Arm(n.Net.Sched, at, n, 0)
}

// OnEvent implements sim.Handler: the wake-up for rate-limited QPs.
func (n *NIC) OnEvent(now sim.Time, _ uint64) {
	if !n.wake.Fired(now) {
		return // superseded by an earlier wake
	}
	n.Port.Kick()
}

// packet builds the data packet the sender sends now.
func (q *sendQP) packet(now sim.Time) *fabric.Packet {
	n := q.nic
	d := q.Next(now)
	q.armRate()
	q.armRTO()
	p := n.Net.Pool.Get()
	p.Kind = fabric.Data
	p.Prio = n.t.cfg.DataPrio
	p.Src, p.Dst = n.ID, q.dst
	p.SrcQP, p.DstQP = q.entropy, q.peer
	p.PSN = d.PSN
	p.Msg = d.Msg
	p.Payload = d.Payload
	if d.Last {
		p.Hdr[0] = hdrLast
	}
	p.Wire = d.Wire
	if n.t.cfg.HPCC.Enabled {
		p.INT = n.Net.INT.New()
	}
	if d.Retransmit {
		n.C.Retransmits++
	}
	return p
}

// armRTO keeps one event at or before the retransmission deadline. The
// deadline never moves before a pending event (every deadline is a later
// now + RTO), so a pending event needs nothing (the common case: the check
// spares the per-packet call).
func (q *sendQP) armRTO() {
	if !q.rto.Pending() {
		q.rto.Arm(q.nic.Net.Sched, q.RTODeadline(), q, tmRTO)
	}
}

// armRate keeps one event at or before the deadline of DCQCN's timers
// (none while the QP is not rate limited: the common case).
func (q *sendQP) armRate() {
	if d := q.RateDeadline(); d != NoDeadline {
		q.rate.Arm(q.nic.Net.Sched, d, q, tmDCQCN)
	}
}

// OnEvent implements sim.Handler for the QP's timers.
func (q *sendQP) OnEvent(now sim.Time, arg uint64) {
	switch arg {
	case tmRTO:
		if !q.rto.Fired(now) {
			return
		}
		if q.OnRTO(now) {
			q.nic.C.Timeouts++
			q.nic.activate(q)
		}
		q.armRTO()
	case tmDCQCN:
		if !q.rate.Fired(now) {
			return // a stale event: an earlier deadline replaced it
		}
		q.OnRateTimer(now)
		q.armRate()
		q.repace(now)
	}
}

// repace makes a QP waiting for its send time wait at its new rate.
func (q *sendQP) repace(now sim.Time) {
	if q.heapIdx > 0 && q.Repace() {
		q.nic.waiting.up(q.heapIdx - 1)
		q.nic.scheduleWake(now)
	}
}

// Receive implements fabric.Node.
func (n *NIC) Receive(p *fabric.Packet, _ *fabric.Port) {
	now := n.Net.Sched.Now()
	switch p.Kind {
	case fabric.Data:
		if !p.Trimmed { // a trimmed packet (switch trimming) is a loss here
			n.receiveData(now, p)
		}
	case fabric.Ack:
		q := n.send[p.DstQP]
		if p.Hdr[0]&hdrCNP != 0 {
			q.OnCNP(now)
			q.armRate()
		}
		progress := q.OnAck(now, p.PSN)
		if p.INT != 0 && q.OnINT(p.PSN, n.Net.INT.Get(p.INT)) {
			q.repace(now)
			progress = true // the window may have opened
		}
		if progress {
			n.activate(q)
		}
	case fabric.Nack:
		q := n.send[p.DstQP]
		n.C.NACKs++
		if p.Hdr[0]&hdrCNP != 0 {
			q.OnCNP(now)
			q.armRate()
		}
		if q.OnAck(now, p.PSN) {
			n.activate(q)
		}
		if p.INT != 0 && q.OnINT(p.PSN, n.Net.INT.Get(p.INT)) {
			q.repace(now)
		}
		q.Rewind(p.PSN)
		n.activate(q)
	case fabric.CNP:
		q := n.send[p.DstQP]
		q.OnCNP(now)
		q.armRate()
	}
	n.Net.Consume(p)
}

func (n *NIC) receiveData(now sim.Time, p *fabric.Packet) {
	t := n.t
	r := &n.recv[p.DstQP]
	d := Data{PSN: p.PSN, Msg: p.Msg, Payload: p.Payload, Last: p.Hdr[0]&hdrLast != 0, CE: p.CE}
	var rp Reply
	rp, t.done = r.OnData(now, &d, t.done[:0])
	if rp.CNP {
		n.C.CNPs++
		n.control(fabric.CNP, p.DstQP, 0, false, 0)
	}
	if rp.ControlCNP {
		n.C.CNPs++ // a notification all the same, carried by the ACK below
	}
	if rp.OutOfOrder {
		n.C.OutOfOrder++
		n.C.ReorderMaxPackets = max(n.C.ReorderMaxPackets, r.Held())
	}
	t.DeliveredPayload += int64(rp.Payload)
	if t.OnDelivered != nil {
		for _, m := range t.done {
			t.OnDelivered(m, now)
		}
	}
	switch rp.Control {
	case SendAck:
		n.control(fabric.Ack, p.DstQP, rp.PSN, rp.ControlCNP, p.INT)
		p.INT = 0
	case SendNack:
		n.control(fabric.Nack, p.DstQP, rp.PSN, rp.ControlCNP, p.INT)
		p.INT = 0
	}
}

// control sends an ACK, NACK or CNP back to the sender of receive QP ri;
// cnp flags an ACK or NACK as carrying a notification, and rec is the
// telemetry record (Packet.INT) of the data packet it answers, which it
// takes over (HPCC; 0 = none).
func (n *NIC) control(k fabric.Kind, ri int32, psn int64, cnp bool, rec int32) {
	r := &n.recv[ri]
	c := n.Net.Pool.Get()
	c.Kind = k
	c.Prio = n.t.cfg.CtrlPrio
	c.Wire = n.t.cfg.ControlWire
	if cnp {
		c.Hdr[0] |= hdrCNP
	}
	c.Src, c.Dst = n.ID, r.src
	c.SrcQP, c.DstQP = ri, r.peer
	c.PSN = psn
	c.INT = rec
	n.Port.Enqueue(c)
}

// SenderRates lists the current DCQCN rate of every QP that still has data
// to send (for diagnostics and tests).
func (t *Transport) SenderRates() []units.Rate {
	var rs []units.Rate
	for _, n := range t.NICs {
		if n == nil {
			continue
		}
		for _, q := range n.send {
			if q.Unacked() {
				rs = append(rs, q.Rate())
			}
		}
	}
	return rs
}

// LastOfMessage reports whether p is a message's last data packet: the
// only one whose arrival can complete the message at an in-order receiver
// (a partitioned run bounds its windows by them).
func LastOfMessage(p *fabric.Packet) bool {
	return p.Kind == fabric.Data && p.Hdr[0]&hdrLast != 0
}
