package homa

import (
	"cmp"
	"fmt"
	"slices"

	"fabriclab/sim"
	"fabriclab/units"
)

// Kind is the type of a Homa packet.
type Kind uint8

// Packet kinds. DATA, GRANT, RESEND and BUSY are the paper's (§3.1, Fig. 3).
// ACK and PROBE are not in the paper, see Endpoint ("Deviations").
const (
	Data   Kind = iota // sender → receiver: Bytes of the message at Offset
	Grant              // receiver → sender: you may send up to Offset, at GrantPrio
	Resend             // receiver → sender: send [Offset, Offset+Bytes) again, at GrantPrio
	Busy               // either way: "I know this message, keep waiting"
	Ack                // receiver → sender: the whole message arrived
	Probe              // sender → receiver: "I sent all I may; do you know this message?"
)

var kindNames = [...]string{"DATA", "GRANT", "RESEND", "BUSY", "ACK", "PROBE"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// MsgID names one message for its whole life. Homa is RPC based: a client
// issues RPC ids unique among its own RPCs; the request travels client →
// server and the response server → client under the same (Client, RPC). A
// one-way message is a request that never gets a response.
type MsgID struct {
	Client int32  // host that issued the RPC (the owner of the id space)
	RPC    uint64 // RPC id, unique per client
	Reply  bool   // false: the request; true: the response
}

// Message is what an application submits.
type Message struct {
	ID     MsgID
	Dst    int32 // receiving host
	Length units.Size
}

// Packet is a Homa header: every field the network must carry between two
// endpoints. The endpoint deals in payload bytes; the wire size is Bytes plus
// the simulator's per-packet overhead for DATA, and a minimum frame for the
// control kinds.
type Packet struct {
	Kind     Kind
	Src, Dst int32 // hosts
	ID       MsgID
	// Length is the message length. DATA and PROBE carry it so that a
	// receiver can create state from whichever packet arrives first.
	Length units.Size
	// Offset is the first payload byte (DATA), the granted-up-to offset
	// (GRANT, exclusive) or the first byte asked for again (RESEND).
	Offset units.Size
	// Bytes is the payload (DATA) or the length of the range (RESEND).
	Bytes units.Size
	// Prio is the switch priority level to queue this packet at.
	Prio uint8
	// GrantPrio (GRANT, RESEND) is the level the sender must use for the
	// scheduled data it answers with.
	GrantPrio uint8
	// Retransmit marks DATA sent again after a RESEND.
	Retransmit bool
}

// EventKind says what happened to a message.
type EventKind uint8

// Event kinds.
const (
	// Delivered: an inbound message arrived in full (receiver side). This is
	// the completion time for FCT metrics. Homa promises at-least-once
	// delivery, so after a lost ACK a message can be delivered again once it
	// has fallen out of DoneMemory; take the first.
	Delivered EventKind = iota
	// Acked: the receiver confirmed an outbound message; the sender forgot it.
	Acked
	// Abandoned: MaxResends timeouts in a row went unanswered; the side that
	// raised it forgot the message (Inbound tells which side).
	Abandoned
)

var eventNames = [...]string{"Delivered", "Acked", "Abandoned"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is an output for the application and the metrics.
type Event struct {
	Kind    EventKind
	ID      MsgID
	Peer    int32 // the other host
	Length  units.Size
	At      sim.Time
	Inbound bool // the event is about a message this endpoint receives
}

// Stats counts what an endpoint did (for the counters of a run).
type Stats struct {
	DataSent, Retransmits         uint64 // DATA packets, and how many were RESEND answers
	Grants, Resends, Busies       uint64 // control packets sent
	Probes, Acks                  uint64
	Timeouts                      uint64 // timer expiries that sent a RESEND or a PROBE
	FIFOGrants                    uint64 // grants of the starvation guard (also in Grants)
	Delivered, Acked, Abandoned   uint64
	DuplicateData, UnknownControl uint64 // DATA for bytes already held; control for a forgotten message
}

// Endpoint is the Homa transport of one host: the sender of its outbound
// messages and the receiver of its inbound ones. It is a pure state machine:
//
//	ep := NewEndpoint(host, params)
//	ep.Submit(now, msg)          // the application sends a message
//	ep.Receive(now, pkt)         // a packet addressed to this host arrived
//	ep.Advance(now)              // run the timers due by now
//	ep.NextPacket(now)           // the uplink is idle: what goes next?
//	ep.HasPacket()               // is there anything to send?
//	ep.NextPrio()                // at which level (to respect a PFC pause)?
//	ep.NextDeadline()            // schedule ONE wake-up at this time, then Advance
//	ep.TakeEvents(buf)           // Delivered / Acked / Abandoned since last time
//
// Packets are pulled, not pushed: the NIC calls NextPacket each time its link
// is free. That is what makes the sender's SRPT real: the choice of which
// message's packet goes next is made when the link frees, so a short message
// submitted while a long one is transmitting overtakes it at the next packet
// boundary, which a queue of already-built packets could not do. Control
// packets go first, in the order they were produced. After every input the
// caller checks HasPacket (to wake an idle NIC) and NextDeadline (to move its
// single timer event); extra Advance calls never change anything. Times must
// not go backwards; an earlier time is treated as the latest seen.
//
// # Sender (§3.2, §3.3)
//
// A message's first Window bytes (RTTBytes rounded up to whole packets) are
// unscheduled: they may go at once, at the unscheduled level chosen from the
// message length by UnschedCutoffs. The rest waits for GRANTs; each GRANT
// raises the offset the sender may send up to and sets the scheduled level
// for what follows. Among its messages with something sendable the sender
// picks the one with the fewest bytes not yet transmitted (SRPT; ties go to
// the earlier submission). Retransmissions asked for by RESEND go before new
// bytes of the same message. A RESEND also counts as a grant up to the end of
// its range (it may replace a lost GRANT). A RESEND for bytes never sent
// (because shorter messages hold the link) is answered with BUSY.
//
// # Receiver (§3.3–§3.5)
//
// Every DATA packet updates the message (out of order is fine: packets are
// tracked one bit each) and then the grant schedule is recomputed: the active
// set is the Overcommit messages with the fewest remaining (not yet received)
// bytes among those not fully granted (ties to the message seen first). With
// n active messages the shortest gets scheduled level min(n, S)−1 and each
// next one a level lower, S being the number of scheduled levels: the lowest
// levels are used when few messages are active, so that a new shorter message
// can still be given a higher one (§3.4). Each active message is granted up
// to min(length, received + Window): one packet's worth per arriving packet,
// keeping Window bytes granted and not yet received. A complete message is
// ACKed and delivered.
//
// # Loss (§3.7)
//
// The receiver expects data while it has granted (or unscheduled) bytes not
// yet received. If none of it arrives for ResendTimeout it sends a RESEND for
// the first missing range below the granted offset. A data packet or a BUSY
// resets the count; the MaxResends+1-th timeout in a row abandons the
// message. Messages not in the active set expect nothing and never time out.
//
// # Deviations from the paper, and why
//
// In the paper the response acknowledges the request, and a server forgets a
// response once sent, re-executing the RPC if the client asks again. A
// simulator has no application to re-execute and mostly runs one-way
// messages, so instead the receiver ACKs every complete message and the
// sender keeps it until then (Homa's Linux implementation added ACKs too).
// For the case where the receiver never saw a message (all unscheduled
// packets lost) or the ACK was lost, a sender that has sent everything it may
// and has heard nothing for ResendTimeout sends a PROBE carrying its send
// offset: the receiver answers with a RESEND for bytes missing below that
// offset (they were lost), the GRANT again if nothing is missing (the GRANT
// was lost), BUSY if it expects nothing (it is not granting the message now),
// ACK if it completed the message recently (the ACK was lost), or, if it has
// never heard of the message, a RESEND of the unscheduled bytes, which
// restarts it. Probes count towards MaxResends like RESENDs.
//
// Nothing here is sized by the fabric: the endpoint allocates per message,
// not per packet. A sender can have thousands of messages queued behind a
// busy uplink, so the per-packet work on the sending side (the SRPT choice,
// the earliest timer, finding the message of a control packet) goes through
// indexes of O(log n) or O(1) cost (see index.go). The receiver's grant
// schedule still scans its incomplete inbound messages, of which a host
// has few: single-packet messages, the bulk of small-message workloads,
// complete on arrival and never join them.
type Endpoint struct {
	p      Params
	host   int32
	window units.Size
	last   sim.Time
	seq    uint64

	nout   int // outbound messages (not yet ACKed or abandoned)
	outs   idMap[*outMsg]
	sendq  sendQueue // the sendable outbound messages, SRPT order
	in     []*inMsg  // inbound, in order first seen
	ins    map[MsgID]*inMsg
	timers timerHeap // the messages whose resend timer may run

	inDue  []*inMsg  // scratch for Advance
	outDue []*outMsg // scratch for Advance

	ctrl     []Packet // control packets waiting for the link, FIFO
	ctrlHead int
	events   []Event

	done     idMap[int32] // recently completed inbound messages → sender
	doneRing []MsgID
	doneNext int

	fifoCredit int64
	active     []*inMsg // scratch for schedule

	stats Stats
}

type span struct {
	off, end units.Size
	prio     uint8
}

type outMsg struct {
	id       MsgID
	dst      int32
	length   units.Size
	seq      uint64
	next     units.Size // bytes below next were all sent once
	granted  units.Size // may send up to here
	unPrio   uint8      // unscheduled level
	schPrio  uint8      // scheduled level from the latest GRANT
	rtx      []span     // ranges to send again, oldest first
	quiet    sim.Time   // last time we sent or heard anything for it
	timeouts int
	si, ti   int // index in Endpoint.sendq and Endpoint.timers, −1 if absent
}

func (m *outMsg) sendable() bool { return len(m.rtx) > 0 || m.next < m.granted }

type inMsg struct {
	id       MsgID
	src      int32
	length   units.Size
	seq      uint64
	got      []uint64 // one bit per packet
	received units.Size
	granted  units.Size
	prio     uint8 // scheduled level of the latest grant
	quiet    sim.Time
	timeouts int
	ti       int // index in Endpoint.timers, −1 if absent
}

func (m *inMsg) remaining() units.Size { return m.length - m.received }

// NewEndpoint returns the endpoint of host; it panics on invalid Params
// (validate them once with Params.Validate where they are read).
func NewEndpoint(host int32, p Params) *Endpoint {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	return &Endpoint{
		p: p, host: host, window: p.Window(),
		ins: make(map[MsgID]*inMsg),
	}
}

// Params returns the parameters of e.
func (e *Endpoint) Params() Params { return e.p }

// Stats returns the counters so far.
func (e *Endpoint) Stats() Stats { return e.stats }

// Outbound is the number of messages e is sending (not yet ACKed or abandoned).
func (e *Endpoint) Outbound() int { return e.nout }

// Inbound is the number of incomplete messages e is receiving.
func (e *Endpoint) Inbound() int { return len(e.in) }

// TakeEvents appends the events since the previous call to dst and returns it.
func (e *Endpoint) TakeEvents(dst []Event) []Event {
	dst = append(dst, e.events...)
	e.events = e.events[:0]
	return dst
}

func (e *Endpoint) clock(now sim.Time) sim.Time {
	if now < e.last {
		return e.last
	}
	e.last = now
	return now
}

// Submit queues a message for sending. Its unscheduled bytes are sendable at
// once. It fails for an empty message, a message to itself or an id in use.
func (e *Endpoint) Submit(now sim.Time, m Message) error {
	now = e.clock(now)
	switch {
	case m.Length <= 0:
		return fmt.Errorf("homa: host %d: message %v has length %d", e.host, m.ID, m.Length)
	case m.Dst == e.host:
		return fmt.Errorf("homa: host %d: message %v addressed to itself", e.host, m.ID)
	}
	if _, ok := e.outs.get(m.ID); ok {
		return fmt.Errorf("homa: host %d: message %v already being sent", e.host, m.ID)
	}
	e.seq++
	o := &outMsg{
		id: m.ID, dst: m.Dst, length: m.Length, seq: e.seq,
		granted: e.p.Unscheduled(m.Length),
		unPrio:  e.p.UnschedPrio(m.Length),
		quiet:   now,
		si:      -1, ti: -1,
	}
	e.nout++
	e.outs.put(m.ID, o)
	e.queueOut(o)
	e.watchOut(o)
	return nil
}

// queueOut puts o in the send queue if it has become sendable.
func (e *Endpoint) queueOut(o *outMsg) {
	if o.si < 0 && o.sendable() {
		e.sendq.push(o)
	}
}

// watchOut puts o in the timer heap if it has started waiting. A message
// already there keeps its key: its deadline cannot have moved earlier.
func (e *Endpoint) watchOut(o *outMsg) {
	if o.ti < 0 && o.waiting() {
		e.timers.push(timer{at: o.quiet + e.p.ResendTimeout, o: o})
	}
}

// watchIn puts m in the timer heap if it has started expecting data.
func (e *Endpoint) watchIn(m *inMsg) {
	if m.ti < 0 && m.expecting() {
		e.timers.push(timer{at: m.quiet + e.p.ResendTimeout, m: m})
	}
}

// HasPacket reports whether NextPacket would return a packet.
func (e *Endpoint) HasPacket() bool {
	return e.ctrlHead < len(e.ctrl) || len(e.sendq) > 0
}

// srptHead is the outbound message whose packet goes next: the sendable
// one with the fewest untransmitted bytes, the earliest submitted among
// equals (nil if none).
func (e *Endpoint) srptHead() *outMsg {
	if len(e.sendq) == 0 {
		return nil
	}
	return e.sendq[0]
}

// NextPrio is the priority level of the packet NextPacket would return now,
// without taking it (false if there is none). A NIC whose link has that
// level paused (PFC) leaves the packet where it is.
func (e *Endpoint) NextPrio() (uint8, bool) {
	if e.ctrlHead < len(e.ctrl) {
		return e.ctrl[e.ctrlHead].Prio, true
	}
	o := e.srptHead()
	if o == nil {
		return 0, false
	}
	if len(o.rtx) > 0 {
		return o.rtx[0].prio, true
	}
	return e.dataPrio(o, o.next), true
}

// NextPacket returns the packet to put on the wire now, if any: the oldest
// waiting control packet, else the next DATA packet of the outbound message
// with the fewest untransmitted bytes.
func (e *Endpoint) NextPacket(now sim.Time) (Packet, bool) {
	now = e.clock(now)
	if e.ctrlHead < len(e.ctrl) {
		pk := e.ctrl[e.ctrlHead]
		e.ctrlHead++
		if e.ctrlHead == len(e.ctrl) {
			e.ctrl, e.ctrlHead = e.ctrl[:0], 0
		}
		return pk, true
	}
	o := e.srptHead()
	if o == nil {
		return Packet{}, false
	}
	pk := Packet{Kind: Data, Src: e.host, Dst: o.dst, ID: o.id, Length: o.length}
	if len(o.rtx) > 0 {
		s := &o.rtx[0]
		pk.Offset = s.off
		pk.Bytes = min(e.p.MTU-s.off%e.p.MTU, s.end-s.off)
		pk.Prio = s.prio
		pk.Retransmit = true
		s.off += pk.Bytes
		if s.off >= s.end {
			o.rtx = o.rtx[1:]
		}
		e.stats.Retransmits++
	} else {
		pk.Offset = o.next
		pk.Bytes = min(e.p.MTU, o.length-o.next)
		pk.Prio = e.dataPrio(o, o.next)
		o.next += pk.Bytes
	}
	o.quiet = now
	if !o.sendable() {
		e.sendq.remove(o.si)
		e.watchOut(o)
	}
	e.stats.DataSent++
	return pk, true
}

// dataPrio is the level of the byte at off of outbound message o.
func (e *Endpoint) dataPrio(o *outMsg, off units.Size) uint8 {
	if off < e.p.Unscheduled(o.length) {
		return o.unPrio
	}
	return o.schPrio
}

func (e *Endpoint) control(kind Kind, dst int32, id MsgID) *Packet {
	e.ctrl = append(e.ctrl, Packet{Kind: kind, Src: e.host, Dst: dst, ID: id, Prio: e.p.ControlPrio()})
	switch kind {
	case Grant:
		e.stats.Grants++
	case Resend:
		e.stats.Resends++
	case Busy:
		e.stats.Busies++
	case Ack:
		e.stats.Acks++
	case Probe:
		e.stats.Probes++
	}
	return &e.ctrl[len(e.ctrl)-1]
}

// Receive handles a packet addressed to this host.
func (e *Endpoint) Receive(now sim.Time, pk Packet) {
	now = e.clock(now)
	switch pk.Kind {
	case Data:
		e.onData(now, pk)
	case Probe:
		e.onProbe(now, pk)
	case Grant, Resend, Ack:
		o, _ := e.outs.get(pk.ID)
		if o == nil {
			e.stats.UnknownControl++
			return
		}
		o.quiet, o.timeouts = now, 0
		switch pk.Kind {
		case Grant:
			if g := min(pk.Offset, o.length); g > o.granted {
				o.granted = g
			}
			o.schPrio = pk.GrantPrio
			e.queueOut(o)
		case Resend:
			e.onResend(o, pk)
			e.queueOut(o)
		case Ack:
			e.removeOut(o)
			e.stats.Acked++
			e.events = append(e.events, Event{Kind: Acked, ID: o.id, Peer: o.dst, Length: o.length, At: now})
		}
	case Busy:
		if o, _ := e.outs.get(pk.ID); o != nil {
			o.quiet, o.timeouts = now, 0
		} else if m := e.ins[pk.ID]; m != nil {
			m.quiet, m.timeouts = now, 0
		} else {
			e.stats.UnknownControl++
		}
	}
}

func (e *Endpoint) onResend(o *outMsg, pk Packet) {
	off := min(pk.Offset, o.length)
	end := min(pk.Offset+pk.Bytes, o.length)
	if end > o.granted {
		o.granted = end // a RESEND implies a grant (it may stand in for a lost one)
	}
	if off >= end {
		return
	}
	if off >= o.next {
		// Never sent: the link is busy with shorter messages (or, if o is the
		// SRPT head, the bytes go out next anyway). Tell the receiver to wait.
		e.control(Busy, o.dst, o.id)
		return
	}
	sentEnd := min(end, o.next)
	for _, s := range o.rtx {
		if s.off <= off && sentEnd <= s.end {
			return // already queued
		}
	}
	// Scheduled bytes go at the level the receiver asks for; unscheduled ones
	// keep their own.
	prio := pk.GrantPrio
	if off < e.p.Unscheduled(o.length) {
		prio = o.unPrio
	}
	o.rtx = append(o.rtx, span{off: off, end: sentEnd, prio: prio})
}

func (e *Endpoint) removeOut(o *outMsg) {
	e.outs.del(o.id)
	e.nout--
	if o.si >= 0 {
		e.sendq.remove(o.si)
	}
	if o.ti >= 0 {
		e.timers.remove(o.ti)
	}
}

func (e *Endpoint) removeIn(m *inMsg) {
	delete(e.ins, m.id)
	if m.ti >= 0 {
		e.timers.remove(m.ti)
	}
	for i, x := range e.in {
		if x == m {
			e.in = append(e.in[:i], e.in[i+1:]...)
			break
		}
	}
}

func (e *Endpoint) remember(id MsgID, src int32) {
	if e.p.DoneMemory == 0 {
		return
	}
	if len(e.doneRing) < e.p.DoneMemory {
		e.doneRing = append(e.doneRing, id)
	} else {
		e.done.del(e.doneRing[e.doneNext])
		e.doneRing[e.doneNext] = id
		e.doneNext = (e.doneNext + 1) % e.p.DoneMemory
	}
	e.done.put(id, src)
}

func (e *Endpoint) newIn(now sim.Time, id MsgID, src int32, length units.Size) *inMsg {
	e.seq++
	npk := (length + e.p.MTU - 1) / e.p.MTU
	m := &inMsg{
		id: id, src: src, length: length, seq: e.seq,
		got:     make([]uint64, (npk+63)/64),
		granted: e.p.Unscheduled(length),
		quiet:   now,
		ti:      -1,
	}
	e.in = append(e.in, m)
	e.ins[id] = m
	e.watchIn(m)
	return m
}

func (e *Endpoint) onData(now sim.Time, pk Packet) {
	m := e.ins[pk.ID]
	if m == nil {
		if _, ok := e.done.get(pk.ID); ok {
			e.stats.DuplicateData++
			e.control(Ack, pk.Src, pk.ID)
			return
		}
		if pk.Length <= 0 {
			return
		}
		if pk.Offset == 0 && pk.Length <= e.p.MTU {
			// The whole message in one packet: it would be created and
			// completed at once, leaving no state but its sequence number.
			e.seq++
			e.complete(now, pk.ID, pk.Src, pk.Length)
			e.schedule()
			return
		}
		m = e.newIn(now, pk.ID, pk.Src, pk.Length)
	}
	m.quiet, m.timeouts = now, 0
	if pk.Offset < 0 || pk.Offset >= m.length || pk.Offset%e.p.MTU != 0 {
		return // not on this message's packet grid: ignore
	}
	i := pk.Offset / e.p.MTU
	if bit := uint64(1) << (i % 64); m.got[i/64]&bit != 0 {
		e.stats.DuplicateData++
	} else {
		m.got[i/64] |= bit
		m.received += min(e.p.MTU, m.length-pk.Offset)
	}
	if m.received >= m.length {
		e.removeIn(m)
		e.complete(now, m.id, m.src, m.length)
	}
	e.schedule()
}

// complete acknowledges and delivers inbound message id, which has left (or
// never joined) the incomplete ones.
func (e *Endpoint) complete(now sim.Time, id MsgID, src int32, length units.Size) {
	e.remember(id, src)
	e.control(Ack, src, id)
	e.stats.Delivered++
	e.events = append(e.events, Event{Kind: Delivered, ID: id, Peer: src, Length: length, At: now, Inbound: true})
}

func (e *Endpoint) onProbe(now sim.Time, pk Packet) {
	if m := e.ins[pk.ID]; m != nil {
		m.quiet, m.timeouts = now, 0
		switch {
		case !m.expecting():
			// It waits for a grant we are not giving now.
			e.control(Busy, m.src, m.id)
		default:
			// The sender has sent everything below pk.Offset: what is
			// missing there is lost; ask for it now. If nothing is missing
			// there, our last GRANT was lost: repeat it.
			off, end := e.firstMissing(m)
			if off < pk.Offset {
				e.resend(m, off, min(end, pk.Offset))
			} else {
				g := e.control(Grant, m.src, m.id)
				g.Offset, g.GrantPrio = m.granted, m.prio
			}
		}
		return
	}
	if _, ok := e.done.get(pk.ID); ok {
		e.control(Ack, pk.Src, pk.ID)
		return
	}
	if pk.Length <= 0 {
		return
	}
	// Never heard of it: every unscheduled packet was lost. Ask for them again.
	r := e.control(Resend, pk.Src, pk.ID)
	r.Bytes = e.p.Unscheduled(pk.Length)
	r.GrantPrio = e.p.UnschedPrio(pk.Length)
}

// pickActive fills e.active with the Overcommit incomplete, not fully granted
// inbound messages with the fewest remaining bytes, shortest first (ties to
// the message seen first).
func (e *Endpoint) pickActive() []*inMsg {
	k := e.p.Overcommit
	act := e.active[:0]
	for _, m := range e.in {
		if m.granted >= m.length {
			continue
		}
		// insertion into the sorted, bounded list
		pos := len(act)
		for pos > 0 && m.remaining() < act[pos-1].remaining() {
			pos--
		}
		if pos >= k {
			continue
		}
		if len(act) < k {
			act = append(act, nil)
		}
		copy(act[pos+1:], act[pos:len(act)-1])
		act[pos] = m
	}
	e.active = act
	return act
}

// schedule issues the grants the current state calls for (see Endpoint).
// A message granted to its end leaves the active set at once, so the pass
// repeats until the set is stable: the next message in line gets its grant
// now, not one packet later.
func (e *Endpoint) schedule() {
	levels := e.p.SchedLevels()
	var granted units.Size
	var act []*inMsg
	for again := true; again; {
		again = false
		act = e.pickActive()
		n := len(act)
		for i, m := range act {
			m.prio = uint8(max(0, min(n, levels)-1-i))
			target := min(m.length, m.received+e.window)
			if target <= m.granted {
				continue
			}
			granted += target - m.granted
			m.grant(target, e.last)
			e.watchIn(m)
			g := e.control(Grant, m.src, m.id)
			g.Offset, g.GrantPrio = m.granted, m.prio
			again = again || m.granted >= m.length
		}
	}
	if p := int64(e.p.FIFOGrantPermille); p > 0 {
		e.fifoGrants(granted, p, act)
	}
}

// fifoGrants is the starvation guard: SRPT grants earn credit, and each
// (1000−p)·MTU of it buys one packet's grant for the oldest message left out
// of the active set.
func (e *Endpoint) fifoGrants(srpt units.Size, p int64, act []*inMsg) {
	price := int64(e.p.MTU) * (1000 - p)
	e.fifoCredit += int64(srpt) * p
	for e.fifoCredit >= price {
		var old *inMsg
		for _, m := range e.in { // e.in is in order first seen: the oldest first
			if m.granted < m.length && !contains(act, m) {
				old = m
				break
			}
		}
		if old == nil || old.granted-old.received >= e.window {
			// Nobody starving, or the oldest still has a window in flight:
			// keep at most one grant's worth of credit so it cannot burst.
			e.fifoCredit = min(e.fifoCredit, price)
			return
		}
		e.fifoCredit -= price
		old.grant(min(old.length, old.granted+e.p.MTU), e.last)
		e.watchIn(old)
		g := e.control(Grant, old.src, old.id)
		g.Offset, g.GrantPrio = old.granted, 0
		e.stats.FIFOGrants++
	}
}

func contains(s []*inMsg, m *inMsg) bool {
	for _, x := range s {
		if x == m {
			return true
		}
	}
	return false
}

// expecting reports whether m waits for bytes it has authorized.
func (m *inMsg) expecting() bool { return m.received < min(m.granted, m.length) }

// grant raises m's granted offset to g at now. A message that expected
// nothing until now (it waited outside the active set) starts its resend
// timer at the grant: measured from its last packet, which may be long ago,
// it would time out before the granted bytes could arrive.
func (m *inMsg) grant(g units.Size, now sim.Time) {
	if !m.expecting() {
		m.quiet = now
	}
	m.granted = g
}

// waiting reports whether o has sent all it may and waits to hear back.
func (o *outMsg) waiting() bool { return !o.sendable() }

// NextDeadline is the earliest time at which Advance has work, or NoDeadline.
func (e *Endpoint) NextDeadline() sim.Time {
	for len(e.timers) > 0 {
		t := &e.timers[0]
		d, ok := e.deadline(t)
		switch {
		case !ok:
			e.timers.remove(0)
		case d != t.at:
			t.at = d // later than the key: it heard something since
			e.timers.down(0)
		default:
			return d
		}
	}
	return NoDeadline
}

// deadline is the current deadline of t's message, false if its timer does
// not run.
func (e *Endpoint) deadline(t *timer) (sim.Time, bool) {
	if o := t.o; o != nil {
		return o.quiet + e.p.ResendTimeout, o.waiting()
	}
	return t.m.quiet + e.p.ResendTimeout, t.m.expecting()
}

// Advance runs every timeout due by now: RESENDs for inbound messages whose
// expected data is late, PROBEs for outbound messages that heard nothing,
// and abandonment after MaxResends unanswered timeouts. Inbound messages go
// first, each side in the order of the messages' sequence numbers (first
// seen, submitted): that is the order of the control packets. Handling one
// message never makes another due or not due (a grant that starts a timer
// starts it now), so the due ones are all taken from the heap first.
func (e *Endpoint) Advance(now sim.Time) {
	now = e.clock(now)
	inDue, outDue := e.inDue[:0], e.outDue[:0]
	for len(e.timers) > 0 && e.timers[0].at <= now {
		t := &e.timers[0]
		d, ok := e.deadline(t)
		switch {
		case !ok:
			e.timers.remove(0)
		case d > now:
			t.at = d
			e.timers.down(0)
		default:
			if t.o != nil {
				outDue = append(outDue, t.o)
			} else {
				inDue = append(inDue, t.m)
			}
			e.timers.remove(0)
		}
	}
	slices.SortFunc(inDue, func(a, b *inMsg) int { return cmp.Compare(a.seq, b.seq) })
	slices.SortFunc(outDue, func(a, b *outMsg) int { return cmp.Compare(a.seq, b.seq) })
	for i, m := range inDue {
		inDue[i] = nil
		if m.timeouts >= e.p.MaxResends {
			e.removeIn(m)
			e.stats.Abandoned++
			e.events = append(e.events, Event{Kind: Abandoned, ID: m.id, Peer: m.src, Length: m.length, At: now, Inbound: true})
			e.schedule() // its grants may go to another message now
			continue
		}
		m.timeouts++
		m.quiet = now
		e.stats.Timeouts++
		off, end := e.firstMissing(m)
		e.resend(m, off, end)
		e.watchIn(m)
	}
	for i, o := range outDue {
		outDue[i] = nil
		if o.timeouts >= e.p.MaxResends {
			e.removeOut(o)
			e.stats.Abandoned++
			e.events = append(e.events, Event{Kind: Abandoned, ID: o.id, Peer: o.dst, Length: o.length, At: now})
			continue
		}
		o.timeouts++
		o.quiet = now
		e.stats.Timeouts++
		pr := e.control(Probe, o.dst, o.id)
		pr.Length, pr.Offset = o.length, o.next
		e.watchOut(o)
	}
	e.inDue, e.outDue = inDue[:0], outDue[:0]
}

// resend asks m's sender for [off, end) again: unscheduled bytes at their
// unscheduled level, scheduled ones at m's current scheduled level.
func (e *Endpoint) resend(m *inMsg, off, end units.Size) {
	r := e.control(Resend, m.src, m.id)
	r.Offset, r.Bytes = off, end-off
	if off < e.p.Unscheduled(m.length) {
		r.GrantPrio = e.p.UnschedPrio(m.length)
	} else {
		r.GrantPrio = m.prio
	}
}

// firstMissing is the first run of missing packets below the granted offset.
func (e *Endpoint) firstMissing(m *inMsg) (off, end units.Size) {
	lim := min(m.granted, m.length)
	mtu := e.p.MTU
	i := units.Size(0)
	for ; i*mtu < lim && m.got[i/64]&(1<<(i%64)) != 0; i++ {
	}
	off = i * mtu
	for ; i*mtu < lim && m.got[i/64]&(1<<(i%64)) == 0; i++ {
	}
	return off, min(i*mtu, lim)
}
