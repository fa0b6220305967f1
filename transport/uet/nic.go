// Package uet is a model of the Ultra Ethernet Consortium's transport
// (UET 1.0): packet spraying over many paths by entropy value (oblivious,
// or recycling clean entropies as REPS does, or one per connection),
// reliable unordered delivery with per-packet sequence numbers, selective
// acknowledgement and resend of only what is missing, an RTO, NSCC's
// sender-based window (ECN plus delay against the base RTT) and RCCC's
// receiver credits, and the NACK a trimmed packet draws (the switches'
// trimming is fabric's SwitchConfig.Trimming).
//
// The protocol is pure state machines: a connection's Sender (sender.go,
// with nscc.go and entropy.go) and Receiver (receiver.go). This file is
// the I/O around them: packets in and out of a host NIC, the NIC's
// round-robin of connections, RCCC's credit and the timers.
package uet

import (
	"fabriclab/fabric"
	"fabriclab/internal/ring"
	"fabriclab/sim"
	"fabriclab/transport/nic"
	"fabriclab/units"
)

// Config holds the settings every host shares.
type Config struct {
	MTU      int32 // payload bytes per data packet
	Overhead int32 // wire bytes added per packet
	DataPrio uint8
	CtrlPrio uint8
	// ControlWire is the wire size of ACKs and NACKs.
	ControlWire int32
	RTO         sim.Time
	// LB and Entropies: how packets are spread (entropy.go).
	LB        LB
	Entropies int
	// NSCCOn runs NSCC's window; RCCC the receiver's credit. Both may be on.
	NSCCOn bool
	RCCC   bool
	NSCC   NSCCParams
	// BaseRTT is the base round trip (0 = each connection's unloaded
	// round trip on its path).
	BaseRTT sim.Time
}

// Packets: data is fabric.Data with PSN, Msg, SrcQP the entropy (what
// ECMP hashes), DstQP the receive context, and Hdr[0] the sender's
// connection, Hdr[1] the message's first PSN, Hdr[2] its packet count,
// Hdr[3] the sender's pending packets. An ACK (fabric.Ack) has PSN the
// cumulative point, DstQP the sender's connection, SrcQP the entropy
// echoed, Hdr[0] flags, Hdr[1] the PSN acknowledged, Hdr[2] the bitmap,
// Hdr[3] the data packet's send time, Hdr[4] RCCC's credit; a NACK
// (fabric.Nack) has PSN the trimmed packet's.
const (
	ackCE = 1 << 0
)

// Transport is the UET layer of every host of one simulation.
type Transport struct {
	nic.Shell[*NIC]
	cfg  Config
	done []int32
}

// New attaches a UET NIC to every host of net.
func New(net *fabric.Network, cfg Config) *Transport {
	if cfg.ControlWire <= 0 {
		cfg.ControlWire = 84
	}
	t := &Transport{cfg: cfg}
	t.Attach(net, func(_ int, pt *fabric.Port) *NIC { return &NIC{t: t, lineRate: pt.Rate} })
	return t
}

// Conn is a handle to one connection (sender side at Src).
type Conn struct {
	Src, Dst int32
	idx      int32
}

// Connect opens a connection from src to dst. Its entropy values start at
// its number among src's connections, so with one entropy its packets
// carry the 5-tuple a RoCE QP of the same number would.
func (t *Transport) Connect(src, dst int) Conn {
	s, d := t.NICs[src], t.NICs[dst]
	ri := int32(len(d.recv))
	d.recv = append(d.recv, recvConn{src: int32(src)})
	si := int32(len(s.send))
	c := &sendConn{nic: s, idx: si, dst: int32(dst), peer: ri}
	rtt := t.cfg.BaseRTT
	if rtt == 0 {
		rtt = t.Net.BaseRTT(src, dst, t.cfg.MTU+t.cfg.Overhead, t.cfg.ControlWire)
	}
	c.Sender.Init(&t.cfg, s.lineRate, rtt, uint32(si))
	s.send = append(s.send, c)
	d.recv[ri].peer = si
	if t.cfg.RCCC {
		d.recv[ri].share = max(int64(float64(d.lineRate)/8*rtt.Seconds())/int64(t.cfg.MTU+t.cfg.Overhead), 1)
	}
	return Conn{Src: int32(src), Dst: int32(dst), idx: si}
}

// Tuple is the 5-tuple of the connection's first packet (with spraying
// every packet carries another entropy in the source-port place).
func (t *Transport) Tuple(c Conn) (src, dst, sqp, dqp int32) {
	q := t.NICs[c.Src].send[c.idx]
	return c.Src, c.Dst, q.idx, q.peer
}

// Post queues a message of bytes on c.
func (t *Transport) Post(c Conn, msg int32, bytes int64) {
	q := t.NICs[c.Src].send[c.idx]
	q.Post(msg, bytes)
	q.nic.activate(q)
}

// Sender is c's sending state machine (read-only use).
func (t *Transport) Sender(c Conn) *Sender { return &t.NICs[c.Src].send[c.idx].Sender }

// Receiver is c's receiving state machine (read-only use).
func (t *Transport) Receiver(c Conn) *Receiver {
	q := t.NICs[c.Src].send[c.idx]
	return &t.NICs[c.Dst].recv[q.peer].Receiver
}

// NIC is one host adapter. Its counters: Retransmits, Timeouts, NACKs
// (received: trimmed packets), OutOfOrder (data beyond the cumulative
// point).
type NIC struct {
	nic.Host
	t        *Transport
	lineRate units.Rate
	send     []*sendConn
	recv     []recvConn
	active   ring.Ring[*sendConn]
	// busy is how many of this NIC's receive contexts have a sender with
	// more to send (RCCC divides the receiver's BDP among them).
	busy int64
}

type sendConn struct {
	nic      *NIC
	idx      int32
	dst      int32
	peer     int32
	inActive bool
	rto      sim.Timer
	Sender
}

type recvConn struct {
	Receiver
	src   int32
	peer  int32
	share int64 // RCCC: the receiver's BDP in packets
	busy  bool
}

func (n *NIC) activate(q *sendConn) {
	if q.inActive || !q.CanSend() {
		return
	}
	q.inActive = true
	n.active.Push(q)
	n.Port.Kick()
}

// Idle implements fabric.Feeder: no connection is in the round-robin,
// so Pull would return nothing and change nothing. A connection gets in
// only through activate, which kicks the port, or through a Pull.
func (n *NIC) Idle() bool { return n.active.Len() == 0 }

// Pull implements fabric.Feeder: the next data packet, round-robin over
// the connections that may send.
func (n *NIC) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	if pt.Paused(n.t.cfg.DataPrio) {
		return nil
	}
	for tries := n.active.Len(); tries > 0; tries-- {
		q := n.active.Pop()
		q.inActive = false
		if !q.CanSend() {
			continue
		}
		p := q.packet(now)
		if q.CanSend() {
			q.inActive = true
			n.active.Push(q)
		}
		return p
	}
	return nil
}

func (q *sendConn) packet(now sim.Time) *fabric.Packet {
	n := q.nic
	d := q.Next(now)
	if d.Retransmit {
		n.C.Retransmits++
	}
	if !q.rto.Pending() {
		q.rto.Arm(n.Net.Sched, q.RTODeadline(), q, 0)
	}
	p := n.Net.Pool.Get()
	p.Kind = fabric.Data
	p.Prio = n.t.cfg.DataPrio
	p.Src, p.Dst = n.ID, q.dst
	p.SrcQP, p.DstQP = int32(d.Entropy), q.peer
	p.PSN, p.Msg, p.Payload, p.Wire = d.PSN, d.Msg, d.Payload, d.Wire
	p.Hdr[0] = uint64(q.idx)
	p.Hdr[1] = uint64(d.MsgFirst)
	p.Hdr[2] = uint64(d.MsgPackets)
	p.Hdr[3] = uint64(d.Pending)
	return p
}

// OnEvent implements sim.Handler: the connection's retransmission timer.
func (q *sendConn) OnEvent(now sim.Time, _ uint64) {
	if !q.rto.Fired(now) {
		return
	}
	if q.OnRTO(now) {
		q.nic.C.Timeouts++
		q.nic.activate(q)
	}
	if d := q.RTODeadline(); d != sim.Never {
		q.rto.Arm(q.nic.Net.Sched, d, q, 0)
	}
}

// Receive implements fabric.Node.
func (n *NIC) Receive(p *fabric.Packet, _ *fabric.Port) {
	now := n.Net.Sched.Now()
	switch p.Kind {
	case fabric.Data:
		n.receiveData(p)
	case fabric.Ack:
		q := n.send[p.DstQP]
		a := Ack{Cum: p.PSN, PSN: int64(p.Hdr[1]), Bits: p.Hdr[2], CE: p.Hdr[0]&ackCE != 0,
			Entropy: uint32(p.SrcQP), SentAt: sim.Time(p.Hdr[3]), Credit: int64(p.Hdr[4])}
		if q.OnAck(now, a) {
			n.activate(q)
		}
	case fabric.Nack:
		q := n.send[p.DstQP]
		n.C.NACKs++
		if q.OnNack(now, p.PSN) {
			n.activate(q)
		}
	}
	n.Net.Consume(p)
}

func (n *NIC) receiveData(p *fabric.Packet) {
	t := n.t
	r := &n.recv[p.DstQP]
	d := Data{PSN: p.PSN, Msg: p.Msg, Payload: p.Payload, MsgFirst: int64(p.Hdr[1]), MsgPackets: int64(p.Hdr[2]),
		Pending: int64(p.Hdr[3]), Entropy: uint32(p.SrcQP)}
	if !p.Trimmed && p.PSN != r.Cum() {
		n.C.OutOfOrder++
	}
	var rp Reply
	rp, t.done = r.OnData(&d, p.Trimmed, t.done[:0])
	t.DeliveredPayload += int64(rp.Payload)
	c := n.Net.Pool.Get()
	c.Prio = t.cfg.CtrlPrio
	c.Wire = t.cfg.ControlWire
	c.Src, c.Dst = n.ID, r.src
	c.SrcQP, c.DstQP = p.SrcQP, r.peer
	if rp.Nack {
		c.Kind = fabric.Nack
		c.PSN = p.PSN
	} else {
		c.Kind = fabric.Ack
		c.PSN = rp.Cum
		if p.CE {
			c.Hdr[0] |= ackCE
		}
		c.Hdr[1] = uint64(rp.PSN)
		c.Hdr[2] = rp.Bits
		c.Hdr[3] = uint64(p.SentAt)
		if t.cfg.RCCC {
			c.Hdr[4] = uint64(n.credit(r))
		}
	}
	n.Port.Enqueue(c)
	if t.OnDelivered != nil {
		now := n.Net.Sched.Now()
		for _, m := range t.done {
			t.OnDelivered(m, now)
		}
	}
}

// credit is RCCC's grant to r's sender: the PSNs it may send, its share
// of the receiver's bandwidth-delay product ahead of what arrived; the
// share is the BDP divided among the senders that still have data for
// this NIC.
func (n *NIC) credit(r *recvConn) int64 {
	if busy := r.Pending > 0; busy != r.busy {
		r.busy = busy
		if busy {
			n.busy++
		} else {
			n.busy--
		}
	}
	share := max(r.share/max(n.busy, 1), 1)
	return r.maxSeen + share
}

// LastOfMessage reports whether p is the last data packet of its message
// (its highest PSN): the receiver completes a message only once it has
// come, on it or, if it came before others, on the last of those (a
// partitioned run bounds its windows by them).
func LastOfMessage(p *fabric.Packet) bool {
	return p.Kind == fabric.Data && p.PSN == int64(p.Hdr[1])+int64(p.Hdr[2])-1
}
