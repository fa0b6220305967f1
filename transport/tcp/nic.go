package tcp

// The fabric adapter: Sender and Receiver state machines attached to the
// hosts of a fabric.Network. This file owns only I/O and timers; every
// window, ECN and loss decision is the state machines'.
//
// Packet mapping (fabric.Packet's common fields, and TCP's words of
// fabric.Packet.Hdr: Hdr[hdrEcho] the timestamp option, Hdr[hdrFlags] the
// flag bits):
//
//	data (fabric.Data, Config.DataPrio): PSN = Seq, Payload = Len,
//	  Wire = Len + Overhead, Hdr[hdrEcho] = SentAt (the timestamp option),
//	  Msg = the message holding the first byte, flag flagRetransmit,
//	  CE set by switches.
//	ACK (fabric.Ack, Config.AckPrio): PSN = cumulative Ack, flag flagECE,
//	  Hdr[hdrEcho] = the echoed SentAt, Wire = ControlWire.
//	SrcQP / DstQP are the connection's index at the sending and at the
//	  receiving end (swapped on ACKs): they stand in for TCP ports, so ECMP
//	  hashes every connection as its own 5-tuple.
//
// Sending: data is pulled by the host port (fabric.Feeder) when the wire
// is free, round-robin over the NIC's connections that have a segment the
// window allows; ACKs go straight into the host port's queue at AckPrio
// (port.Enqueue, as RoCE's control frames), so they are sent ahead of the
// next pulled data segment and wait only behind the frame on the wire.

import (
	"fabriclab/fabric"
	"fabriclab/internal/ring"
	"fabriclab/sim"
	"fabriclab/transport/nic"
	"fabriclab/units"
)

// Config holds the transport settings shared by every host.
type Config struct {
	// Params is the window logic of every connection; Params.MSS is the
	// payload per segment. A zero Params means DefaultParams(); otherwise
	// its zero numeric fields (MSS, InitCwnd, MinCwnd, G, DupAckThreshold,
	// MinRTO, InitRTO, MaxRTO) take the defaults, while Mode, InitAlpha and
	// NoECN are used as given.
	Params Params
	// Overhead is the wire bytes added to every data segment: headers,
	// FCS, preamble and inter-frame gap (IPv4 + TCP + Ethernet = 78 B).
	Overhead int32
	// ControlWire is the wire size of a pure ACK (default 84 B: a minimum
	// Ethernet frame plus preamble and IFG).
	ControlWire int32
	// AckEvery is the receiver's delayed-ACK count: an ACK every n-th
	// in-order segment (DCTCP: 1 or 2; default 1).
	AckEvery int
	// AckDelay is how long the receiver holds an ACK when AckEvery > 1.
	AckDelay sim.Time
	// DataPrio and AckPrio are the switch priorities of data and of ACKs.
	DataPrio, AckPrio uint8
}

// DefaultControlWire is the wire size of a pure ACK when Config leaves it 0.
const DefaultControlWire = 84

// TCP's words of fabric.Packet.Hdr.
const (
	hdrEcho  = 0 // the timestamp option (a sim.Time)
	hdrFlags = 1 // flag bits
)

// Flag bits in Hdr[hdrFlags].
const (
	flagECE        = 1 << 0 // ACK: ECN echo
	flagRetransmit = 1 << 1 // data: sent before (diagnostics only)
)

// Transport is the TCP layer of every host of one simulation. Its shell
// (transport/nic) holds the NICs, OnDelivered (called when the last byte of
// message msg, and of every message before it on its connection, reaches
// the receiver) and DeliveredPayload (payload bytes received in order:
// progress).
type Transport struct {
	nic.Shell[*NIC]
	cfg Config

	// Scratch buffers reused on the per-packet path.
	acks []Ack
	done []Done
}

// New attaches a TCP NIC to every host of net. It panics on Params that
// cannot work (validate them where they are read).
func New(net *fabric.Network, cfg Config) *Transport {
	cfg.Params = withDefaults(cfg.Params)
	if err := cfg.Params.Validate(); err != nil {
		panic(err)
	}
	if cfg.ControlWire <= 0 {
		cfg.ControlWire = DefaultControlWire
	}
	if cfg.AckEvery < 1 {
		cfg.AckEvery = 1
	}
	t := &Transport{cfg: cfg, acks: make([]Ack, 0, 4), done: make([]Done, 0, 4)}
	t.Attach(net, func(int, *fabric.Port) *NIC { return &NIC{t: t} })
	return t
}

func withDefaults(p Params) Params {
	d := DefaultParams()
	if p == (Params{}) {
		return d
	}
	if p.MSS == 0 {
		p.MSS = d.MSS
	}
	if p.InitCwnd == 0 {
		p.InitCwnd = d.InitCwnd
	}
	if p.MinCwnd == 0 {
		p.MinCwnd = d.MinCwnd
	}
	if p.G == 0 {
		p.G = d.G
	}
	if p.DupAckThreshold == 0 {
		p.DupAckThreshold = d.DupAckThreshold
	}
	if p.MinRTO == 0 {
		p.MinRTO = d.MinRTO
	}
	if p.InitRTO == 0 {
		p.InitRTO = d.InitRTO
	}
	if p.MaxRTO == 0 {
		p.MaxRTO = max(d.MaxRTO, p.MinRTO)
	}
	return p
}

// Params returns the connection parameters in use (defaults filled in).
func (t *Transport) Params() Params { return t.cfg.Params }

// Conn is a handle to one connection (sending side at Src).
type Conn struct {
	Src, Dst int32
	idx      int32 // index in NICs[Src].send
}

// Connect opens a new connection from src to dst: its own byte stream and
// its own 5-tuple (ECMP may place connections of one host pair on
// different paths). Reusing one connection per pair or keeping a pool is
// the caller's policy.
func (t *Transport) Connect(src, dst int) Conn {
	s, d := t.NICs[src], t.NICs[dst]
	ri := int32(len(d.recv))
	si := int32(len(s.send))
	r := &rconn{nic: d, idx: ri, src: int32(src), peer: si, r: NewReceiver(t.cfg.AckEvery, t.cfg.AckDelay)}
	c := &sconn{nic: s, idx: si, dst: int32(dst), peer: ri, s: NewSender(t.cfg.Params)}
	d.recv = append(d.recv, r)
	s.send = append(s.send, c)
	return Conn{Src: int32(src), Dst: int32(dst), idx: si}
}

// Tuple is the 5-tuple fields of c's data packets (source and destination
// host, and the connection's index at each end standing in for the ports).
func (t *Transport) Tuple(c Conn) (src, dst, sport, dport int32) {
	q := t.NICs[c.Src].send[c.idx]
	return c.Src, c.Dst, q.idx, q.peer
}

// Post appends message msg of bytes to c's byte stream. Messages of one
// connection are sent and delivered strictly one after the other
// (head-of-line blocking). A message of 0 bytes is sent as 1 byte (a
// length prefix still crosses the network). msg is the caller's id,
// reported by OnDelivered.
func (t *Transport) Post(c Conn, msg int32, bytes int64) {
	t.Expect(c, msg, bytes)
	t.Submit(c, msg, bytes)
}

// Submit is Post's sending half: message msg joins c's byte stream at
// its sender. Expect, the receiving half, tells c's receiver where the
// message ends; a caller that runs the two ends apart (a partitioned
// run, where the receiver's host runs in another part) calls Expect there,
// for the same messages in the same order, before any of their bytes can
// arrive.
func (t *Transport) Submit(c Conn, msg int32, bytes int64) {
	q := t.NICs[c.Src].send[c.idx]
	q.s.Submit(t.Net.Sched.Now(), uint64(uint32(msg)), units.Size(max(bytes, 1)))
	q.nic.activate(q)
}

// Expect is Post's receiving half (see Submit).
func (t *Transport) Expect(c Conn, msg int32, bytes int64) {
	t.Receiver(c).Expect(uint64(uint32(msg)), units.Size(max(bytes, 1)))
}

// Framed is the length of c's stream as its receiver knows it: where the
// last message it expects ends.
func (t *Transport) Framed(c Conn) int64 { return int64(t.Receiver(c).Total()) }

// Sender and Receiver expose c's state machines (read-only use: tests,
// diagnostics, per-connection progress such as Receiver(c).Received()).
func (t *Transport) Sender(c Conn) *Sender { return t.NICs[c.Src].send[c.idx].s }

// Receiver is c's receiving half (see Sender).
func (t *Transport) Receiver(c Conn) *Receiver {
	q := t.NICs[c.Src].send[c.idx]
	return t.NICs[c.Dst].recv[q.peer].r
}

// Stats sums the state machines' own counters over every connection
// (segments, ACKs, ECN cuts, fast retransmits, marked bytes…).
func (t *Transport) Stats() (Counts, RecvCounts) {
	var s Counts
	var r RecvCounts
	for _, n := range t.NICs {
		if n == nil {
			continue
		}
		for _, q := range n.send {
			c := &q.s.Counts
			s.Segments += c.Segments
			s.Retransmits += c.Retransmits
			s.FastRetransmits += c.FastRetransmits
			s.RTOs += c.RTOs
			s.ECNCuts += c.ECNCuts
			s.ECEAcks += c.ECEAcks
			s.Acks += c.Acks
			s.AlphaUpdates += c.AlphaUpdates
			s.BytesAcked += c.BytesAcked
			s.BytesMarked += c.BytesMarked
		}
		for _, q := range n.recv {
			c := &q.r.Counts
			r.Segments += c.Segments
			r.OutOfOrder += c.OutOfOrder
			r.Duplicates += c.Duplicates
			r.CE += c.CE
			r.Acks += c.Acks
		}
	}
	return s, r
}

// NIC is one host adapter: the host's port, the sending halves of the
// connections that start here (served round-robin) and the receiving
// halves of those that end here. Its counters (C; the shell's Counters sums
// them) are Retransmits (data segments sent again, fast retransmit and
// go-back-N after an RTO), Timeouts (RTO expiries) and OutOfOrder (segments
// that arrived beyond a hole). Packets and bytes sent are counted by the
// host ports (Port.Counters), not here, so that adding both never counts a
// packet twice.
type NIC struct {
	nic.Host
	t    *Transport
	send []*sconn
	recv []*rconn

	active ring.Ring[*sconn] // connections that may have a segment to send
}

// sconn is the sending half of a connection.
type sconn struct {
	nic      *NIC
	idx      int32
	dst      int32
	peer     int32 // index of the receiving half at dst
	s        *Sender
	inActive bool
	timer    sim.Timer // the retransmission timer's pending event
}

// rconn is the receiving half of a connection.
type rconn struct {
	nic   *NIC
	idx   int32
	src   int32
	peer  int32 // index of the sending half at src
	r     *Receiver
	timer sim.Timer // the delayed-ACK timer's pending event
}

// activate puts q in the round-robin when its window lets it send, and
// wakes the port.
func (n *NIC) activate(q *sconn) {
	if q.inActive || !q.s.HasSegment() {
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

// Pull implements fabric.Feeder: the next data segment, round-robin over
// the connections whose window allows one; nothing while the data class is
// paused by PFC.
func (n *NIC) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	cfg := &n.t.cfg
	if pt.Paused(cfg.DataPrio) {
		return nil
	}
	for n.active.Len() > 0 {
		q := n.active.Pop()
		seg, ok := q.s.NextSegment(now)
		if !ok {
			q.inActive = false
			continue
		}
		if q.s.HasSegment() {
			n.active.Push(q) // to the back: round-robin
		} else {
			q.inActive = false
		}
		q.arm() // the first segment of a flight starts the RTO timer
		p := n.Net.Pool.Get()
		p.Kind = fabric.Data
		p.Prio = cfg.DataPrio
		p.Src, p.Dst = n.ID, q.dst
		p.SrcQP, p.DstQP = q.idx, q.peer
		p.PSN = int64(seg.Seq)
		p.Payload = int32(seg.Len)
		p.Wire = p.Payload + cfg.Overhead
		p.Msg = int32(uint32(seg.Msg))
		p.Hdr[hdrEcho] = uint64(seg.SentAt)
		p.SentAt = now
		if seg.Retransmit {
			p.Hdr[hdrFlags] = flagRetransmit
			n.C.Retransmits++
		}
		return p
	}
	return nil
}

// Receive implements fabric.Node.
func (n *NIC) Receive(p *fabric.Packet, _ *fabric.Port) {
	now := n.Net.Sched.Now()
	switch p.Kind {
	case fabric.Data:
		if int(p.DstQP) < len(n.recv) && !p.Trimmed { // trimmed (switch trimming): a loss here
			n.recv[p.DstQP].onData(now, p)
		}
	case fabric.Ack:
		if int(p.DstQP) < len(n.send) {
			n.send[p.DstQP].onAck(now, p)
		}
	}
	n.Net.Consume(p)
}

func (q *sconn) onAck(now sim.Time, p *fabric.Packet) {
	q.s.OnAck(now, Ack{Ack: units.Size(p.PSN), ECE: p.Hdr[hdrFlags]&flagECE != 0, Echo: sim.Time(p.Hdr[hdrEcho])})
	q.afterInput()
}

// afterInput drains the completions the application does not need (the
// receiver reports delivery), re-arms the timer and wakes the NIC.
func (q *sconn) afterInput() {
	t := q.nic.t
	t.done = q.s.TakeAcked(t.done[:0])
	q.arm()
	q.nic.activate(q)
}

// arm makes sure a timer event is pending at or before the sender's
// deadline. Only a deadline earlier than the pending event schedules a new
// one; a later one is picked up when the pending event fires.
func (q *sconn) arm() { q.timer.Arm(q.nic.Net.Sched, q.s.NextDeadline(), q, 0) }

// OnEvent implements sim.Handler: the retransmission timer.
func (q *sconn) OnEvent(now sim.Time, _ uint64) {
	if !q.timer.Fired(now) {
		return // stale: an earlier event replaced this one
	}
	before := q.s.Counts.RTOs
	q.s.Advance(now)
	q.nic.C.Timeouts += int64(q.s.Counts.RTOs - before)
	q.afterInput()
}

func (r *rconn) onData(now sim.Time, p *fabric.Packet) {
	t := r.nic.t
	before, ooo := r.r.Received(), r.r.Counts.OutOfOrder
	seg := Segment{Seq: units.Size(p.PSN), Len: units.Size(p.Payload), SentAt: sim.Time(p.Hdr[hdrEcho]), CE: p.CE,
		Retransmit: p.Hdr[hdrFlags]&flagRetransmit != 0}
	t.acks = r.r.OnSegment(now, seg, t.acks[:0])
	r.nic.C.OutOfOrder += int64(r.r.Counts.OutOfOrder - ooo)
	t.DeliveredPayload += int64(r.r.Received() - before)
	r.sendAcks()
	t.done = r.r.TakeDelivered(t.done[:0])
	for _, d := range t.done {
		if t.OnDelivered != nil {
			t.OnDelivered(int32(uint32(d.ID)), now)
		}
	}
	r.arm()
}

func (r *rconn) sendAcks() {
	n := r.nic
	cfg := &n.t.cfg
	for _, a := range n.t.acks {
		p := n.Net.Pool.Get()
		p.Kind = fabric.Ack
		p.Prio = cfg.AckPrio
		p.Wire = cfg.ControlWire
		p.Src, p.Dst = n.ID, r.src
		p.SrcQP, p.DstQP = r.idx, r.peer
		p.PSN = int64(a.Ack)
		p.Hdr[hdrEcho] = uint64(a.Echo)
		if a.ECE {
			p.Hdr[hdrFlags] = flagECE
		}
		n.Port.Enqueue(p)
	}
}

func (r *rconn) arm() { r.timer.Arm(r.nic.Net.Sched, r.r.NextDeadline(), r, 0) }

// OnEvent implements sim.Handler: the delayed-ACK timer.
func (r *rconn) OnEvent(now sim.Time, _ uint64) {
	if !r.timer.Fired(now) {
		return
	}
	t := r.nic.t
	t.acks = r.r.Advance(now, t.acks[:0])
	r.sendAcks()
	r.arm()
}
