package homa

// The fabric adapter: one NIC per host port of a fabric.Network, each the
// I/O around one Endpoint. The NIC is the port's Feeder (the port pulls the
// endpoint's next packet whenever it is idle, so the sender's SRPT choice is
// made at each packet boundary) and its Node (packets addressed to the host
// are decoded and handed to the endpoint). One timer event per endpoint
// drives its RESEND/PROBE timeouts.
//
// # Wire format
//
// DATA travels as fabric.Data (switches ECN-mark it, explain mode sees it);
// GRANT, RESEND, BUSY, ACK and PROBE as fabric.Ack. The header fields map to
// fabric.Packet's common fields and to Homa's words of fabric.Packet.Hdr:
//
//	Homa Packet    fabric.Packet
//	Kind           Hdr[0] bits 0–7 (and Kind: Data or Ack)
//	Src, Dst       Src, Dst
//	ID.Client      Hdr[0] bits 32–63
//	ID.RPC         Msg (the caller's msg id of Transport.Send, an int32)
//	ID.Reply       Hdr[0] bit 8 (flagReply)
//	Retransmit     Hdr[0] bit 9 (flagRetransmit)
//	GrantPrio      Hdr[0] bits 16–23
//	Length         Hdr[1]
//	Offset         PSN
//	Bytes          Hdr[2] (and Payload, for DATA)
//	Prio           Prio (0..7, 7 highest: the fabric's strict priority)
//
// SrcQP (the UDP source port ECMP hashes) is the RPC id, so each message is
// its own flow: its packets keep one path under static ECMP and different
// messages of one host pair spread. DATA is Bytes + Config.Overhead on the
// wire, every control packet Config.ControlWire.

import (
	"fmt"

	"fabriclab/fabric"
	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/transport/nic"
	"fabriclab/units"
)

// Config holds the Homa NIC settings shared by every host.
type Config struct {
	// Params are the protocol parameters; Params.MTU is the payload of a
	// full data packet. The zero value means DefaultParams().
	Params Params
	// Overhead is the wire bytes added to every DATA packet (headers,
	// preamble, inter-frame gap).
	Overhead int32
	// ControlWire is the wire size of GRANT, RESEND, BUSY, ACK and PROBE
	// frames; 0 means DefaultControlWire.
	ControlWire int32
}

// DefaultControlWire is a minimum Ethernet frame plus preamble and
// inter-frame gap (64 + 20 B).
const DefaultControlWire = 84

// Homa's word 0 of fabric.Packet.Hdr (see Wire format): the kind, flag
// bits, the grant priority and the client.
const (
	flagReply      = 1 << 8
	flagRetransmit = 1 << 9
	shiftGrantPrio = 16
	shiftClient    = 32
)

// Transport is the Homa layer of every host of one simulation. Its shell
// (transport/nic) holds the NICs, OnDelivered (called at the first delivery
// of message msg, the id given to Send, at its receiver: the arrival of its
// last missing packet) and DeliveredPayload (payload bytes of delivered
// messages, each message once, when it is delivered: progress).
type Transport struct {
	nic.Shell[*NIC]
	cfg Config
	// OnAbandoned, if set, is called when a side gives up on message msg
	// after Params.MaxResends unanswered timeouts (inbound: at the
	// receiver). An abandoned message that was not delivered never will be.
	OnAbandoned func(msg int32, now sim.Time, inbound bool)

	// delivered holds messages delivered whose sender has not yet heard the
	// ACK: Homa is at-least-once, and a message can be delivered again if
	// its ACK is lost and the receiver has forgotten it. Entries go when
	// the sender sees the ACK (or gives up), so the map stays as small as
	// the number of messages in flight.
	delivered idMap[struct{}]
}

// New attaches a Homa NIC to every host port of net. It panics on invalid
// Params (check them with Params.Validate where they are read).
func New(net *fabric.Network, cfg Config) *Transport {
	if cfg.Params.MTU == 0 && cfg.Params.RTTBytes == 0 && cfg.Params.Priorities == 0 {
		cfg.Params = DefaultParams()
	}
	if err := cfg.Params.Validate(); err != nil {
		panic(err)
	}
	if cfg.Params.Priorities > fabric.NumPrio {
		panic(fmt.Sprintf("homa: %d priority levels, the fabric has %d", cfg.Params.Priorities, fabric.NumPrio))
	}
	if cfg.Params.MTU > 1<<30 {
		panic(fmt.Sprintf("homa: MTU %d does not fit a packet", cfg.Params.MTU))
	}
	if cfg.ControlWire <= 0 {
		cfg.ControlWire = DefaultControlWire
	}
	t := &Transport{cfg: cfg}
	t.Attach(net, func(h int, _ *fabric.Port) *NIC { return &NIC{t: t, ep: NewEndpoint(int32(h), cfg.Params)} })
	return t
}

// Config returns the configuration in use (defaults filled in).
func (t *Transport) Config() Config { return t.cfg }

// Send starts a one-way message (a Homa request) of bytes from src to dst
// now; msg is the caller's id, reported by OnDelivered. Its Homa id is
// (Client src, RPC msg, request), so (src, msg) must not be in flight
// already. A message of 0 bytes travels as 1 byte (Homa has no empty
// messages). Send panics for src == dst or an id in use: the workload must
// not produce those.
func (t *Transport) Send(src, dst int, msg int32, bytes int64) {
	n := t.NICs[src]
	now := t.Net.Sched.Now()
	m := Message{ID: MsgID{Client: int32(src), RPC: uint64(int64(msg))}, Dst: int32(dst), Length: units.Size(max(bytes, 1))}
	if err := n.ep.Submit(now, m); err != nil {
		panic(err)
	}
	n.after(now)
}

// Progress is message msg from src to dst at its receiver: the bytes it
// has granted and received. ok is false when the receiver holds no such
// message (not heard of yet, or complete).
func (t *Transport) Progress(src, dst int, msg int32) (granted, received int64, ok bool) {
	m := t.NICs[dst].ep.ins[MsgID{Client: int32(src), RPC: uint64(int64(msg))}]
	if m == nil {
		return 0, 0, false
	}
	return int64(m.granted), int64(m.received), true
}

// Tuple is the 5-tuple fields the DATA packets of message msg from src to
// dst carry (what ECMP hashes): the hosts, SrcQP = msg, DstQP = 0.
func (t *Transport) Tuple(src, dst int, msg int32) (s, d, sqp, dqp int32) {
	return int32(src), int32(dst), msg, 0
}

// PathRTT is the unloaded round-trip time from src to dst as the paper
// defines it for RTTbytes: from the first bit of a full DATA packet (wire
// dataWire) leaving src to the first bit of the answering control packet
// (wire ctrlWire) coming back, every hop store-and-forward (serialization at
// the hop's rate plus its propagation and forwarding latency). The path
// is the one static ECMP picks for the 5-tuple (src, dst, 0, 0) each way;
// equal-cost paths of a Clos have equal length. Use the farthest pair of
// hosts and RTTBytesFor(host rate, rtt) to size Params.RTTBytes.
func PathRTT(net *fabric.Network, src, dst int, dataWire, ctrlWire int32) sim.Time {
	return oneWay(net, src, dst, dataWire) + oneWay(net, dst, src, ctrlWire)
}

// oneWay is the time wire bytes take from host src to host dst on an idle
// fabric (each hop: serialization + delay), or panics when dst is not
// reachable.
func oneWay(net *fabric.Network, src, dst int, wire int32) sim.Time {
	pt := net.HostPorts[src]
	var d sim.Time
	for hops := 0; ; hops++ {
		d += pt.TxTime(wire) + pt.Delay
		sw := pt.Peer.Sw()
		if sw == nil {
			if pt.Peer != net.HostPorts[dst] {
				panic(fmt.Sprintf("homa: path %d→%d ends at another host", src, dst))
			}
			return d
		}
		pt = sw.NextHop(int32(src), int32(dst), 0, 0)
		if pt == nil || hops > 64 {
			panic(fmt.Sprintf("homa: no path %d→%d", src, dst))
		}
	}
}

// Stats sums every endpoint's protocol counters (grants, resends, busies,
// probes, acks, abandoned messages…).
func (t *Transport) Stats() Stats {
	var s Stats
	for _, n := range t.NICs {
		if n != nil {
			s.add(n.ep.Stats())
		}
	}
	return s
}

func (s *Stats) add(o Stats) {
	s.DataSent += o.DataSent
	s.Retransmits += o.Retransmits
	s.Grants += o.Grants
	s.Resends += o.Resends
	s.Busies += o.Busies
	s.Probes += o.Probes
	s.Acks += o.Acks
	s.Timeouts += o.Timeouts
	s.FIFOGrants += o.FIFOGrants
	s.Delivered += o.Delivered
	s.Acked += o.Acked
	s.Abandoned += o.Abandoned
	s.DuplicateData += o.DuplicateData
	s.UnknownControl += o.UnknownControl
}

// DuplicateDeliveries counts messages delivered again after their first
// delivery (Homa is at-least-once: a lost ACK and a forgotten message make
// the sender restart it). They are not reported to OnDelivered.
func (t *Transport) DuplicateDeliveries() uint64 {
	var k uint64
	for _, n := range t.NICs {
		if n != nil {
			k += n.dupDeliveries
		}
	}
	return k
}

// Pending is the number of messages not yet finished on any side (being
// sent and not acknowledged, or being received and not complete).
func (t *Transport) Pending() int {
	k := 0
	for _, n := range t.NICs {
		if n != nil {
			k += n.ep.Outbound() + n.ep.Inbound()
		}
	}
	return k
}

// event handles one endpoint event of NIC n.
func (t *Transport) event(n *NIC, ev Event) {
	switch ev.Kind {
	case Delivered:
		if _, dup := t.delivered.get(ev.ID); dup {
			n.dupDeliveries++
			return
		}
		t.delivered.put(ev.ID, struct{}{})
		t.DeliveredPayload += int64(ev.Length)
		if t.OnDelivered != nil {
			t.OnDelivered(int32(ev.ID.RPC), ev.At)
		}
	case Acked:
		t.delivered.del(ev.ID)
	case Abandoned:
		if !ev.Inbound {
			t.delivered.del(ev.ID)
		}
		if t.OnAbandoned != nil {
			t.OnAbandoned(int32(ev.ID.RPC), ev.At, ev.Inbound)
		}
	}
}

// NIC is one host adapter: its port and its Homa endpoint.
type NIC struct {
	nic.Host
	t  *Transport
	ep *Endpoint

	timer    sim.Timer // the endpoint's pending timer event
	events   []Event   // reused buffer for TakeEvents
	draining bool      // inside after(): a nested call leaves the work to it

	dupDeliveries uint64 // deliveries after the first (at-least-once)
	// onReceive, if set, runs after the endpoint handled each packet
	// (tests check invariants with it). It takes no argument: handing it
	// the packet's address would move every packet to the heap.
	onReceive func()
}

// Endpoint is the NIC's protocol state machine (for inspection).
func (n *NIC) Endpoint() *Endpoint { return n.ep }

// Counters is this NIC's transport counters, which the shell's Counters
// sums: Retransmits (DATA sent again after a RESEND) and Timeouts (timer
// expiries that sent a RESEND or a PROBE), from the endpoint's Stats (the
// Host's C stays zero). Packet and byte counts are the ports' (fabric.Port
// counters); they are not repeated here, so adding these to the port totals
// counts nothing twice.
func (n *NIC) Counters() metrics.Counters {
	s := n.ep.Stats()
	return metrics.Counters{Retransmits: int64(s.Retransmits), Timeouts: int64(s.Timeouts)}
}

// Idle implements fabric.Feeder: the endpoint has no packet to send, so
// Pull would return nothing and change nothing. The endpoint gets one
// only from an input (a message submitted, a packet received, its timer),
// after which the NIC kicks the port (after), or within a Pull.
func (n *NIC) Idle() bool { return !n.ep.HasPacket() }

// Pull implements fabric.Feeder: the endpoint's next packet (control first,
// then SRPT data), or nil when there is none or its priority is paused by
// PFC on the host link.
func (n *NIC) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	prio, ok := n.ep.NextPrio()
	if !ok || pt.Paused(prio) {
		return nil
	}
	pk, _ := n.ep.NextPacket(now)
	p := n.Net.Pool.Get()
	n.encode(p, &pk)
	// Sending the last packet it may send starts a message's wait for the
	// receiver, with the deadline now + ResendTimeout: no earlier than a
	// timer already pending (set from an older time), so only a NIC without
	// one needs to look.
	if !n.timer.Pending() {
		n.arm(now)
	}
	return p
}

func (n *NIC) encode(p *fabric.Packet, pk *Packet) {
	if pk.Kind == Data {
		p.Kind = fabric.Data
		p.Payload = int32(pk.Bytes)
		p.Wire = p.Payload + n.t.cfg.Overhead
	} else {
		p.Kind = fabric.Ack
		p.Wire = n.t.cfg.ControlWire
	}
	p.Prio = pk.Prio
	p.Src, p.Dst = pk.Src, pk.Dst
	p.Msg = int32(pk.ID.RPC)
	p.SrcQP = p.Msg
	p.PSN = int64(pk.Offset)
	w := uint64(pk.Kind) | uint64(pk.GrantPrio)<<shiftGrantPrio | uint64(uint32(pk.ID.Client))<<shiftClient
	if pk.ID.Reply {
		w |= flagReply
	}
	if pk.Retransmit {
		w |= flagRetransmit
	}
	p.Hdr = fabric.Header{w, uint64(pk.Length), uint64(pk.Bytes)}
}

func decode(p *fabric.Packet) Packet {
	w := p.Hdr[0]
	return Packet{
		Kind: Kind(uint8(w)),
		Src:  p.Src, Dst: p.Dst,
		ID:         MsgID{Client: int32(uint32(w >> shiftClient)), RPC: uint64(int64(p.Msg)), Reply: w&flagReply != 0},
		Length:     units.Size(p.Hdr[1]),
		Offset:     units.Size(p.PSN),
		Bytes:      units.Size(p.Hdr[2]),
		Prio:       p.Prio,
		GrantPrio:  uint8(w >> shiftGrantPrio),
		Retransmit: w&flagRetransmit != 0,
	}
}

// Receive implements fabric.Node: a packet addressed to this host.
func (n *NIC) Receive(p *fabric.Packet, _ *fabric.Port) {
	now := n.Net.Sched.Now()
	if p.Trimmed { // switch trimming: Homa has no use for a header alone, a loss
		n.Net.Consume(p)
		return
	}
	pk := decode(p)
	n.Net.Consume(p)
	n.ep.Receive(now, pk)
	if n.onReceive != nil {
		n.onReceive()
	}
	n.after(now)
}

// OnEvent implements sim.Handler: the endpoint's timer.
func (n *NIC) OnEvent(now sim.Time, _ uint64) {
	if !n.timer.Fired(now) {
		return // stale: an earlier deadline replaced this event
	}
	n.ep.Advance(now)
	n.after(now)
}

// after follows every input to the endpoint: hand its events to the
// transport, move the timer if the deadline came earlier, and wake the port
// if there is something to send. Callbacks may call Send (on this NIC too):
// the nested call leaves the work to the outer one.
func (n *NIC) after(now sim.Time) {
	if n.draining {
		return
	}
	n.draining = true
	for {
		n.events = n.ep.TakeEvents(n.events[:0])
		if len(n.events) == 0 {
			break
		}
		for i := range n.events {
			n.t.event(n, n.events[i])
		}
	}
	n.draining = false
	n.arm(now)
	if n.ep.HasPacket() {
		n.Port.Kick()
	}
}

// arm keeps one timer event at or before the endpoint's next deadline. A
// deadline that moved later is left to the pending event, which finds
// nothing due, and re-arms.
func (n *NIC) arm(sim.Time) { n.timer.Arm(n.Net.Sched, n.ep.NextDeadline(), n, 0) }

// LastOfMessage reports whether p is a DATA packet that ends its message
// (its offset plus bytes is the message's length): the receiver completes
// a message only once it has come, on it or, if it came before others, on
// the last of those (a partitioned run bounds its windows by them). It
// holds because every grant, resend and probe range ends on the packet
// grid or at the message's length (Params.Window is whole packets), so a
// packet that fills the last slot always ends at the length.
func LastOfMessage(p *fabric.Packet) bool {
	return p.Kind == fabric.Data && p.PSN+int64(p.Hdr[2]) == int64(p.Hdr[1])
}
