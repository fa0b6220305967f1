// Package roce is the RoCEv2 reliable-connection transport: queue pairs
// that segment messages into MTU packets, a per-QP rate limiter driven by
// DCQCN, cumulative ACKs, NACK + go-back-N on loss, a retransmission
// timeout, and CNP generation at the receiver.
//
// The DCQCN reaction point (dcqcn.go) is a pure state machine; this file is
// the I/O around it: packets in and out of a host NIC, and timers.
package roce

import (
	"fabriclab/fabric"
	"fabriclab/internal/ring"
	"fabriclab/metrics"
	"fabriclab/sim"
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
}

// ControlWire is the wire size of ACK, NACK and CNP frames: a minimum
// Ethernet frame plus preamble and inter-frame gap.
const ControlWire = 84

// Transport is the RoCE layer of every host of one simulation.
type Transport struct {
	cfg  Config
	net  *fabric.Network
	NICs []*NIC
	// OnDelivered is called when the last byte of message msg reaches its
	// receiver in order.
	OnDelivered func(msg int32, now sim.Time)
	// DeliveredPayload counts payload bytes delivered in order (progress).
	DeliveredPayload int64
}

// New attaches a RoCE NIC to every host of net.
func New(net *fabric.Network, cfg Config) *Transport {
	if cfg.AckEvery < 1 {
		cfg.AckEvery = 1
	}
	if cfg.Burst < 1 {
		cfg.Burst = 1
	}
	t := &Transport{cfg: cfg, net: net}
	t.NICs = make([]*NIC, len(net.HostPorts))
	for h, pt := range net.HostPorts {
		nic := &NIC{t: t, host: int32(h), port: pt, lineRate: pt.Rate, name: fabric.HostName(h)}
		t.NICs[h] = nic
		net.SetHost(h, nic, nic)
	}
	return t
}

// SetName renames host h's NIC (as ports and counters show it), e.g. to
// tell a GPU's scale-up endpoint from its fabric NIC.
func (t *Transport) SetName(h int, name string) { t.NICs[h].name = name }

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
	si := int32(len(s.send))
	q := &sendQP{nic: s, idx: si, dst: int32(dst), peer: ri, dcqcnAt: -1}
	q.rp.Init(t.cfg.DCQCN, s.lineRate)
	s.send = append(s.send, q)
	d.recv[ri].peer = si
	return QP{Src: int32(src), Dst: int32(dst), idx: si}
}

// Tuple is the 5-tuple fields a data packet of qp carries (source and
// destination host and QP numbers), which is what ECMP hashes.
func (t *Transport) Tuple(qp QP) (src, dst, sqp, dqp int32) {
	q := t.NICs[qp.Src].send[qp.idx]
	return qp.Src, qp.Dst, q.idx, q.peer
}

// Post queues a message of bytes on qp; msg is the caller's id reported by
// OnDelivered.
func (t *Transport) Post(qp QP, msg int32, bytes int64) {
	q := t.NICs[qp.Src].send[qp.idx]
	mtu := int64(t.cfg.MTU)
	n := (bytes + mtu - 1) / mtu
	if n < 1 {
		n = 1
	}
	last := bytes - (n-1)*mtu
	q.msgs = append(q.msgs, qmsg{id: msg, first: q.end, last: q.end + n - 1, lastPayload: int32(last)})
	q.end += n
	q.nic.activate(q)
}

// Counters sums every NIC's transport counters.
func (t *Transport) Counters() metrics.Counters {
	var c metrics.Counters
	for _, n := range t.NICs {
		c.Add(n.C)
	}
	return c
}

// NIC is one host adapter: it owns the host's port, its sending QPs
// (scheduled round-robin, paced by their rate limiters) and the receive
// state of connections that end here.
type NIC struct {
	t        *Transport
	host     int32
	name     string
	port     *fabric.Port
	lineRate units.Rate
	send     []*sendQP
	recv     []recvQP

	active  ring.Ring[*sendQP] // QPs with data that may be ready to send
	waiting qpHeap             // QPs held back by their rate limiter, by nextSend
	wake    sim.Timer          // the pending wake event for rate-limited QPs
	// burstQP is the QP in the middle of a burst of Config.Burst packets
	// (it stays at the front of the round-robin until the burst ends).
	burstQP   *sendQP
	burstLeft int
	C         metrics.Counters
}

// Name implements fabric.Node.
func (n *NIC) Name() string { return n.name }

type qmsg struct {
	id          int32
	first, last int64 // PSN range
	lastPayload int32
}

type sendQP struct {
	nic  *NIC
	idx  int32
	dst  int32
	peer int32 // receiver's QP index

	msgs   []qmsg
	head   int   // first message not fully acked
	cur    int   // message holding nxt
	nxt    int64 // next PSN to send
	una    int64 // oldest unacked PSN
	end    int64 // one past the last PSN posted
	maxNxt int64 // highest nxt ever reached (PSNs below it are resends)

	nextSend sim.Time
	lastSent sim.Time // when the last data packet went out
	lastWire int32    // and its wire size (for re-pacing on a rate change)
	inActive bool
	heapIdx  int // 1 + index in the NIC's waiting heap, 0 if not there

	rp      ReactionPoint
	dcqcnAt sim.Time // pending DCQCN timer event, -1 = none

	rtoArmed    bool
	rtoPending  bool
	rtoDeadline sim.Time
}

type recvQP struct {
	src      int32
	peer     int32
	expected int64
	nacked   bool // a NACK for expected is outstanding
	sinceAck int
	lastCNP  sim.Time
	cnpSent  bool

	// Out-of-order acceptance (Config.AcceptOutOfOrder): packets above
	// expected held in the reorder buffer, and the message ends seen but
	// not yet reached in order.
	held     heldSet
	nHeld    int64
	lastsDue []msgEnd
}

type msgEnd struct {
	psn int64
	msg int32
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

// QP timer kinds.
const (
	tmRTO = iota + 1
	tmDCQCN
)

func (q *sendQP) canSend() bool {
	if q.nxt >= q.end {
		return false
	}
	if mi := q.nic.t.cfg.MaxInflight; mi > 0 && (q.nxt-q.una)*int64(q.nic.t.cfg.MTU) >= mi {
		return false
	}
	return true
}

// activate puts q in the round-robin when it has something to send.
func (n *NIC) activate(q *sendQP) {
	if q.inActive || q.heapIdx > 0 || !q.canSend() {
		return
	}
	q.inActive = true
	n.active.Push(q)
	n.port.Kick()
}

// Pull implements fabric.Feeder: the next data packet, round-robin over
// ready QPs, respecting PFC pause of the data class and each QP's pacing.
func (n *NIC) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	cfg := &n.t.cfg
	if pt.Paused(cfg.DataPrio) {
		return nil
	}
	for n.waiting.len() > 0 && n.waiting.min().nextSend <= now {
		q := n.waiting.pop()
		if q.canSend() {
			q.inActive = true
			n.active.Push(q)
		}
	}
	for tries := n.active.Len(); tries > 0; tries-- {
		q := n.active.Pop()
		q.inActive = false
		if !q.canSend() {
			continue
		}
		if q.nextSend > now {
			n.waiting.push(q)
			continue
		}
		p := q.packet(now)
		if n.burstQP != q {
			n.burstQP, n.burstLeft = q, cfg.Burst
		}
		n.burstLeft--
		if q.canSend() {
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

// scheduleWake makes sure the NIC looks again when the earliest
// rate-limited QP may send.
func (n *NIC) scheduleWake(now sim.Time) {
	if n.waiting.len() == 0 {
		return
	}
	at := n.waiting.min().nextSend
	if at <= now {
		n.port.Kick()
		return
	}
	n.wake.Arm(n.t.net.Sched, at, n, 0)
}

// OnEvent implements sim.Handler: the wake-up for rate-limited QPs.
func (n *NIC) OnEvent(now sim.Time, _ uint64) {
	if !n.wake.Fired(now) {
		return // superseded by an earlier wake
	}
	n.port.Kick()
}

// packet builds the data packet for PSN nxt and advances the QP.
func (q *sendQP) packet(now sim.Time) *fabric.Packet {
	n := q.nic
	cfg := &n.t.cfg
	// A message posted after the previous one was fully sent (but not yet
	// acknowledged) starts past cur's last PSN: move on to it first, or its
	// first packet would be labelled as the old message's.
	for q.cur < len(q.msgs)-1 && q.nxt > q.msgs[q.cur].last {
		q.cur++
	}
	m := &q.msgs[q.cur]
	p := n.t.net.Pool.Get()
	p.Kind = fabric.Data
	p.Prio = cfg.DataPrio
	p.Src, p.Dst = n.host, q.dst
	p.SrcQP, p.DstQP = q.idx, q.peer
	p.PSN = q.nxt
	p.Msg = m.id
	p.Payload = cfg.MTU
	if q.nxt == m.last {
		p.Payload = m.lastPayload
		p.Last = true
	}
	p.Wire = p.Payload + cfg.Overhead
	if q.nxt < q.maxNxt {
		n.C.Retransmits++
	}
	q.nxt++
	if q.nxt > q.maxNxt {
		q.maxNxt = q.nxt
	}
	if q.nxt > m.last && q.cur < len(q.msgs)-1 {
		q.cur++
	}
	if cfg.DCQCN.Enabled {
		q.rp.OnSent(now, units.Size(p.Wire))
		q.armDCQCN()
	}
	// Pacing: the rate limiter lets the next packet go one frame time at the
	// QP's current rate after this one.
	q.lastSent, q.lastWire = now, p.Wire
	q.nextSend = q.paced()
	q.armRTO(now)
	return p
}

func (q *sendQP) armRTO(now sim.Time) {
	rto := q.nic.t.cfg.RTO
	if rto <= 0 {
		return
	}
	q.rtoArmed = true
	q.rtoDeadline = now + rto
	if !q.rtoPending {
		q.rtoPending = true
		q.nic.t.net.Sched.At(q.rtoDeadline, q, tmRTO)
	}
}

func (q *sendQP) armDCQCN() {
	d := q.rp.NextDeadline()
	if d == NoDeadline {
		return
	}
	if q.dcqcnAt < 0 || d < q.dcqcnAt {
		q.dcqcnAt = d
		q.nic.t.net.Sched.At(d, q, tmDCQCN)
	}
}

// OnEvent implements sim.Handler for the QP's timers.
func (q *sendQP) OnEvent(now sim.Time, arg uint64) {
	switch arg {
	case tmRTO:
		q.rtoPending = false
		if !q.rtoArmed {
			return
		}
		if now < q.rtoDeadline {
			q.rtoPending = true
			q.nic.t.net.Sched.At(q.rtoDeadline, q, tmRTO)
			return
		}
		if q.una >= q.nxt && q.nxt >= q.end {
			q.rtoArmed = false
			return
		}
		q.nic.C.Timeouts++
		q.rewind(q.una)
		q.armRTO(now)
	case tmDCQCN:
		if now != q.dcqcnAt {
			return // a stale event: an earlier deadline replaced it
		}
		q.dcqcnAt = -1
		q.rp.Advance(now)
		q.armDCQCN()
		q.repace(now)
	}
}

// paced is when the rate limiter lets the packet after the last one go.
func (q *sendQP) paced() sim.Time {
	if r := q.rp.Rate(); r < q.nic.lineRate {
		return q.lastSent + units.SerializationTime(units.Size(q.lastWire), r)
	}
	return q.lastSent
}

// repace applies a rate increase to a QP already waiting for its next
// send time, as a token-bucket limiter would: the wait is recomputed at the
// new rate instead of running out at the old one.
func (q *sendQP) repace(now sim.Time) {
	if q.heapIdx == 0 {
		return
	}
	if next := q.paced(); next < q.nextSend {
		q.nextSend = next
		q.nic.waiting.up(q.heapIdx - 1)
		q.nic.scheduleWake(now)
	}
}

// rewind restarts sending from psn (go-back-N).
func (q *sendQP) rewind(psn int64) {
	if psn < q.una {
		psn = q.una
	}
	q.nxt = psn
	q.cur = q.head
	for q.cur < len(q.msgs)-1 && q.msgs[q.cur].last < psn {
		q.cur++
	}
	q.nic.activate(q)
}

// ack handles a cumulative acknowledgement: every PSN below psn arrived.
func (q *sendQP) ack(now sim.Time, psn int64) {
	if psn <= q.una {
		return
	}
	q.una = psn
	for q.head < len(q.msgs) && q.msgs[q.head].last < psn {
		q.head++
	}
	if q.head == len(q.msgs) && q.una >= q.end {
		// Everything acked: recycle the message list.
		q.msgs = q.msgs[:0]
		q.head, q.cur = 0, 0
	} else if q.cur < q.head {
		q.cur = q.head
	}
	if q.nxt < psn {
		q.nxt = psn
		for q.cur < len(q.msgs)-1 && q.msgs[q.cur].last < psn {
			q.cur++
		}
	}
	if q.una >= q.end {
		q.rtoArmed = false
	} else {
		q.rtoDeadline = now + q.nic.t.cfg.RTO
	}
	q.nic.activate(q)
}

// Receive implements fabric.Node.
func (n *NIC) Receive(p *fabric.Packet, _ *fabric.Port) {
	now := n.t.net.Sched.Now()
	switch p.Kind {
	case fabric.Data:
		n.receiveData(now, p)
	case fabric.Ack:
		n.send[p.DstQP].ack(now, p.PSN)
	case fabric.Nack:
		q := n.send[p.DstQP]
		n.C.NACKs++
		q.ack(now, p.PSN)
		q.rewind(p.PSN)
	case fabric.CNP:
		q := n.send[p.DstQP]
		if n.t.cfg.DCQCN.Enabled {
			q.rp.OnCNP(now)
			q.armDCQCN()
		}
	}
	n.t.net.Consume(p)
}

func (n *NIC) receiveData(now sim.Time, p *fabric.Packet) {
	cfg := &n.t.cfg
	r := &n.recv[p.DstQP]
	if p.CE {
		if cfg.DCQCN.Enabled && (!r.cnpSent || now-r.lastCNP >= cfg.DCQCN.CNPInterval) {
			r.cnpSent = true
			r.lastCNP = now
			n.C.CNPs++
			n.control(fabric.CNP, p.DstQP, 0)
		}
	}
	if cfg.AcceptOutOfOrder {
		n.receiveAnyOrder(now, p, r)
		return
	}
	switch {
	case p.PSN == r.expected:
		r.expected++
		r.nacked = false
		n.t.DeliveredPayload += int64(p.Payload)
		r.sinceAck++
		if p.Last {
			n.t.OnDelivered(p.Msg, now)
		}
		if r.sinceAck >= cfg.AckEvery || p.Last {
			r.sinceAck = 0
			n.control(fabric.Ack, p.DstQP, r.expected)
		}
	case p.PSN > r.expected:
		n.C.OutOfOrder++
		if !r.nacked {
			r.nacked = true
			n.control(fabric.Nack, p.DstQP, r.expected)
		}
	default:
		// A duplicate of something already delivered: re-acknowledge so the
		// sender stops resending it.
		n.control(fabric.Ack, p.DstQP, r.expected)
	}
}

// receiveAnyOrder is the receiver that accepts packets out of order (as
// NICs built for spraying and adaptive routing do): a packet above the
// expected PSN waits in the reorder buffer, the expected PSN then jumps over
// everything held, and a message completes once all its packets are in.
// Acknowledgements stay cumulative; a lost packet is recovered by the
// sender's timeout (no NACK: a gap is normal here).
func (n *NIC) receiveAnyOrder(now sim.Time, p *fabric.Packet, r *recvQP) {
	cfg := &n.t.cfg
	if p.PSN < r.expected || r.held.has(r.expected, p.PSN) {
		n.control(fabric.Ack, p.DstQP, r.expected) // a duplicate
		return
	}
	n.t.DeliveredPayload += int64(p.Payload)
	if p.Last {
		// Keep message ends sorted by PSN (they arrive nearly in order).
		k := len(r.lastsDue)
		r.lastsDue = append(r.lastsDue, msgEnd{})
		for k > 0 && r.lastsDue[k-1].psn > p.PSN {
			r.lastsDue[k] = r.lastsDue[k-1]
			k--
		}
		r.lastsDue[k] = msgEnd{p.PSN, p.Msg}
	}
	if p.PSN > r.expected {
		n.C.OutOfOrder++
		r.held.set(r.expected, p.PSN)
		r.nHeld++
		n.C.ReorderMaxPackets = max(n.C.ReorderMaxPackets, r.nHeld)
		return
	}
	r.expected++
	for r.held.has(r.expected, r.expected) {
		r.held.clear(r.expected)
		r.nHeld--
		r.expected++
	}
	done := 0
	for done < len(r.lastsDue) && r.lastsDue[done].psn < r.expected {
		n.t.OnDelivered(r.lastsDue[done].msg, now)
		done++
	}
	if done > 0 {
		r.lastsDue = append(r.lastsDue[:0], r.lastsDue[done:]...)
	}
	r.sinceAck++
	if r.sinceAck >= cfg.AckEvery || done > 0 {
		r.sinceAck = 0
		n.control(fabric.Ack, p.DstQP, r.expected)
	}
}

// control sends an ACK, NACK or CNP back to the sender of r.
func (n *NIC) control(k fabric.Kind, ri int32, psn int64) {
	r := &n.recv[ri]
	c := n.t.net.Pool.Get()
	c.Kind = k
	c.Prio = n.t.cfg.CtrlPrio
	c.Wire = ControlWire
	c.Src, c.Dst = n.host, r.src
	c.SrcQP, c.DstQP = ri, r.peer
	c.PSN = psn
	n.port.Enqueue(c)
}

// SenderRates lists the current DCQCN rate of every QP that still has data
// to send (for diagnostics and tests).
func (t *Transport) SenderRates() []units.Rate {
	var rs []units.Rate
	for _, n := range t.NICs {
		for _, q := range n.send {
			if q.una < q.end {
				rs = append(rs, q.rp.Rate())
			}
		}
	}
	return rs
}
