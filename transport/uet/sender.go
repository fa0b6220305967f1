package uet

import (
	"sort"

	"fabriclab/sim"
	"fabriclab/units"
)

// Sender is the sending half of one UET connection (a reliable unordered
// delivery context), a pure state machine like RoCE's: it owns no timers
// and does no I/O.
//
//	s.Init(&cfg, lineRate, baseRTT, entropyBase)
//	s.Post(msg, bytes)
//	s.CanSend()                  // a packet waits and the window and credit allow it
//	d := s.Next(now)             // the data packet to send now
//	s.OnAck(now, a)              // an ACK: cumulative, selective, ECN and delay
//	s.OnNack(now, psn)           // the receiver got psn trimmed: resend it
//	s.RTODeadline(); s.OnRTO(now)
//
// # Reliability
//
// Every packet has its own PSN, the packets of a connection's messages
// numbered from 0 in posting order. The receiver takes them in any order;
// each ACK says the cumulative point (every PSN below arrived), the PSN
// that drew it and a bitmap of the 64 PSNs after the cumulative point, so
// the sender knows exactly what arrived and sends again only what did not:
// a trimmed packet as soon as its NACK arrives, and, when no ACK has
// brought news for RTO, every packet sent and not acknowledged.
//
// # Congestion control and load balancing
//
// NSCC (nscc.go) bounds the bytes in flight; with RCCC the receiver's
// credit also bounds the PSNs sent (a new PSN only below the credit the
// ACKs grant; the first BDP is unscheduled). The entropy of every packet,
// which the switches hash, comes from entropy.go (spraying, REPS or one
// value). Nothing allocates in steady state.
type Sender struct {
	cfg *Config

	msgs []smsg
	head int   // first message not fully acknowledged
	nxt  int64 // next new PSN
	una  int64 // every PSN below it is acknowledged
	end  int64 // one past the last PSN posted

	acked  psnSet // acknowledged PSNs at or above una
	out    psnSet // PSNs in flight (sent, not acknowledged, not known lost)
	queued psnSet // PSNs waiting in resend
	resend []int64
	rhead  int

	inflight int64 // bytes of the PSNs in out
	credit   int64 // RCCC: new PSNs below it may go
	cc       nscc
	ent      entropies

	progress    sim.Time // the last ACK that acknowledged something, or the first send
	rtoArmed    bool
	rtoDeadline sim.Time
}

type smsg struct {
	id          int32
	first, last int64
	lastPayload int32
}

// Data is a data packet's header as the sender fills it.
type Data struct {
	PSN     int64
	Msg     int32
	Payload int32
	Wire    int32
	// MsgFirst and MsgPackets place the packet in its message, so the
	// receiver knows when a message is complete whatever the order.
	MsgFirst   int64
	MsgPackets int64
	Entropy    uint32
	// Pending is how many new packets the sender still has after this one
	// (RCCC's demand).
	Pending    int64
	Retransmit bool
}

// Ack is what an ACK tells the sender.
type Ack struct {
	Cum      int64  // every PSN below arrived
	PSN      int64  // the PSN that drew this ACK
	Bits     uint64 // bit i: PSN Cum+1+i arrived
	CE       bool   // that packet was ECN-marked
	Entropy  uint32 // that packet's entropy
	SentAt   sim.Time
	Credit   int64 // RCCC: PSNs below it may be sent (0 = no grant)
	Trimmed  bool
	Receiver int32
}

// Init (re)initialises s on a link of lineRate with base round trip
// baseRTT; entropyBase is the connection's first entropy value.
func (s *Sender) Init(cfg *Config, lineRate units.Rate, baseRTT sim.Time, entropyBase uint32) {
	*s = Sender{cfg: cfg}
	bdp := float64(lineRate) / 8 * baseRTT.Seconds()
	s.cc.init(&cfg.NSCC, bdp, float64(cfg.MTU+cfg.Overhead), baseRTT)
	s.ent.init(cfg.LB, cfg.Entropies, entropyBase)
	s.credit = max(int64(bdp)/int64(cfg.MTU+cfg.Overhead), 1)
}

// Post queues message msg of bytes.
func (s *Sender) Post(msg int32, bytes int64) {
	mtu := int64(s.cfg.MTU)
	n := max((bytes+mtu-1)/mtu, 1)
	s.msgs = append(s.msgs, smsg{id: msg, first: s.end, last: s.end + n - 1, lastPayload: int32(bytes - (n-1)*mtu)})
	s.end += n
}

// nextPSN is the PSN Next would send, or −1.
func (s *Sender) nextPSN() int64 {
	for s.rhead < len(s.resend) {
		psn := s.resend[s.rhead]
		if psn >= s.una && !s.acked.has(psn) && !s.out.has(psn) {
			return psn
		}
		s.queued.remove(psn)
		s.rhead++ // acknowledged meanwhile, or below una
	}
	if s.rhead > 0 {
		s.resend, s.rhead = s.resend[:0], 0
	}
	if s.nxt < s.end && (!s.cfg.RCCC || s.nxt < s.credit) {
		return s.nxt
	}
	return -1
}

// CanSend reports whether a packet waits and the window and credit let it go.
func (s *Sender) CanSend() bool {
	if s.cfg.NSCCOn && float64(s.inflight) >= s.cc.window() {
		return false
	}
	return s.nextPSN() >= 0
}

// Next is the packet to send at now (call it only when CanSend).
func (s *Sender) Next(now sim.Time) Data {
	psn := s.nextPSN()
	d := Data{PSN: psn}
	if psn == s.nxt {
		s.nxt++
	} else {
		s.rhead++
		s.queued.remove(psn)
		d.Retransmit = true
	}
	m := s.msgOf(psn)
	d.Msg, d.MsgFirst, d.MsgPackets = m.id, m.first, m.last-m.first+1
	d.Payload = s.cfg.MTU
	if psn == m.last {
		d.Payload = m.lastPayload
	}
	d.Wire = d.Payload + s.cfg.Overhead
	d.Entropy = s.ent.Next()
	d.Pending = s.end - s.nxt
	s.out.add(psn)
	s.inflight += int64(d.Wire)
	if !s.rtoArmed {
		s.progress = now
	}
	s.armRTO()
	return d
}

// msgOf is the message holding psn (posted, not yet fully acknowledged).
func (s *Sender) msgOf(psn int64) *smsg {
	ms := s.msgs[s.head:]
	i := sort.Search(len(ms), func(i int) bool { return ms[i].last >= psn })
	return &ms[i]
}

// wireOf is the wire size of psn's packet.
func (s *Sender) wireOf(psn int64) int64 {
	m := s.msgOf(psn)
	if psn == m.last {
		return int64(m.lastPayload + s.cfg.Overhead)
	}
	return int64(s.cfg.MTU + s.cfg.Overhead)
}

// OnAck handles an ACK at now; it reports whether it acknowledged
// anything new or raised the credit (the NIC then lets the connection
// send).
func (s *Sender) OnAck(now sim.Time, a Ack) bool {
	news := false
	if a.Credit > s.credit {
		s.credit, news = a.Credit, true
	}
	var bytes int64
	ack := func(psn int64) {
		if psn < s.una || psn >= s.nxt || s.acked.has(psn) {
			return
		}
		w := s.wireOf(psn)
		s.acked.add(psn)
		if s.out.remove(psn) {
			s.inflight -= w
		}
		bytes += w
	}
	for psn := s.una; psn < min(a.Cum, s.nxt); psn++ {
		ack(psn)
	}
	ack(a.PSN)
	for b := a.Bits; b != 0; b &= b - 1 {
		ack(a.Cum + 1 + int64(trailing(b)))
	}
	if bytes == 0 {
		return news
	}
	if !a.CE {
		s.ent.Good(a.Entropy)
	}
	if s.cfg.NSCCOn {
		s.cc.OnAck(float64(bytes), now-a.SentAt, a.CE)
	}
	s.advance()
	s.progress = now
	s.armRTO()
	return true
}

// advance moves una past the acknowledged PSNs and forgets what is
// below it.
func (s *Sender) advance() {
	una := s.acked.firstMissing(s.una)
	if una == s.una {
		return
	}
	s.una = una
	s.acked.drop(una)
	s.out.drop(una)
	s.queued.drop(una)
	for s.head < len(s.msgs) && s.msgs[s.head].last < una {
		s.head++
	}
	if s.head == len(s.msgs) && una >= s.end {
		s.msgs, s.head = s.msgs[:0], 0
	} else if s.head > 64 && s.head > len(s.msgs)/2 {
		// A connection that never drains (messages posted as others
		// finish) keeps only what is outstanding.
		n := copy(s.msgs, s.msgs[s.head:])
		s.msgs, s.head = s.msgs[:n], 0
	}
}

// OnNack handles the receiver's word that psn arrived trimmed: it is
// sent again, first in line.
//
// A NACK for a PSN not in flight (already queued again after a timeout,
// or acknowledged) changes nothing. A NACK is news: it holds off the RTO.
func (s *Sender) OnNack(now sim.Time, psn int64) bool {
	if psn < s.una || psn >= s.nxt || s.acked.has(psn) || !s.out.remove(psn) {
		return false
	}
	s.inflight -= s.wireOf(psn)
	if s.cfg.NSCCOn {
		s.cc.OnTrim()
	}
	s.queue(psn)
	s.progress = now
	s.armRTO()
	return true
}

func (s *Sender) queue(psn int64) {
	if s.queued.add(psn) {
		s.resend = append(s.resend, psn)
	}
}

func (s *Sender) armRTO() {
	s.rtoArmed = s.cfg.RTO > 0 && s.una < s.nxt
	s.rtoDeadline = s.progress + s.cfg.RTO
}

// RTODeadline is when the retransmission timer expires, or sim.Never.
func (s *Sender) RTODeadline() sim.Time {
	if !s.rtoArmed {
		return sim.Never
	}
	return s.rtoDeadline
}

// OnRTO runs the timer at now: with no news for RTO, every PSN sent and
// not acknowledged is taken as lost and queued again. It reports a
// timeout.
func (s *Sender) OnRTO(now sim.Time) bool {
	if !s.rtoArmed || now < s.rtoDeadline {
		return false
	}
	for psn := s.una; psn < s.nxt; psn++ {
		if s.acked.has(psn) {
			continue
		}
		s.out.remove(psn)
		s.queue(psn)
	}
	s.inflight = 0
	if s.cfg.NSCCOn {
		s.cc.OnTimeout()
	}
	s.progress = now
	s.armRTO()
	return true
}

// Unacked reports whether some posted packet is not acknowledged yet.
func (s *Sender) Unacked() bool { return s.una < s.end }

// Window is NSCC's window in bytes; Inflight the bytes in flight.
func (s *Sender) Window() float64 { return s.cc.window() }

// Inflight is the bytes sent and neither acknowledged nor known lost.
func (s *Sender) Inflight() int64 { return s.inflight }

// PSNs returns una, nxt and end.
func (s *Sender) PSNs() (una, nxt, end int64) { return s.una, s.nxt, s.end }
