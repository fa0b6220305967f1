package roce

import (
	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

// Sender is the sending half of one queue pair, a pure state machine in the
// style of etcd's raft (and of transport/tcp's Sender): it owns no timers and
// does no I/O. The NIC feeds it inputs stamped with the current simulated
// time and acts on what it returns:
//
//	s.Init(&cfg, lineRate)             // or NewSender
//	s.Post(msg, bytes)                 // queue a message
//	s.CanSend()                        // a packet is waiting and the window allows it
//	s.SendAt()                         // … but the rate limiter holds it until then
//	d := s.Next(now)                   // the data packet to put on the wire now
//	s.OnAck(now, psn)                  // a cumulative ACK: every PSN below psn arrived
//	s.OnAck(now, psn); s.Rewind(psn)   // a NACK: the same, then go back to psn
//	s.OnCNP(now)                       // a CNP, for DCQCN's reaction point
//	s.OnINT(psn, rec)                  // an ACK's telemetry, for HPCC (hpcc.go)
//	s.RTODeadline(); s.OnRTO(now)      // the retransmission timer
//	s.RateDeadline(); s.OnRateTimer(now) // DCQCN's timers
//	s.Repace()                         // the rate rose: shorten the pacing wait
//
// The NIC wakes its port after every input that may let the QP send (OnAck
// reporting progress, Rewind, Post, a timeout), and the port pulls Next
// right away if it is idle. A NACK is two inputs because the NIC may send a
// packet between its ACK part and its rewind. The retransmission timer and
// DCQCN's timers are separate deadlines, each one event of the NIC's; times
// must not go backwards. Nothing allocates except Post's message list.
//
// # Segmentation
//
// A message of b bytes is ⌈b/MTU⌉ packets (at least one), every one of MTU
// payload bytes except the last, which carries the rest. The packets of a
// QP's messages have consecutive packet sequence numbers (PSNs) from 0, in
// posting order.
//
// # Go-back-N
//
// nxt is the next PSN to send and una the oldest one not acknowledged. An
// ACK for psn moves una up to psn (and nxt with it if nxt was below); a
// rewind to psn sends again from max(psn, una). A packet below the highest
// PSN ever sent is a retransmission. With Config.MaxInflight > 0 the sender
// stops while (nxt − una)·MTU ≥ MaxInflight.
//
// # Retransmission timeout
//
// Every data packet sent arms the timer at now + RTO; an ACK of new data
// pushes it to now + RTO, and the ACK of everything posted disarms it. When
// it expires with packets unacknowledged or unsent, the sender goes back to
// una (a timeout) and re-arms at now + RTO; with nothing outstanding nor
// left to send it disarms. RTO ≤ 0 turns the timer off.
//
// # Pacing, DCQCN and HPCC
//
// The rate limiter lets the packet after one of w wire bytes go w/rate
// after it, rate being the reaction point's current rate (line rate: no
// wait). Sending reports the wire bytes to the reaction point (its byte
// counter) and CNPs go to it when Config.DCQCN.Enabled. A rate change does
// not move the pacing wait of a packet already scheduled unless the NIC
// asks with Repace, which it does for a QP waiting on its rate limiter
// after DCQCN's timers raised the rate (as a token bucket would). With
// Config.HPCC.Enabled the rate is HPCC's instead, set by the telemetry
// ACKs echo (OnINT), and the sender also stops while (nxt − una)·MTU ≥
// the window R·T.
type Sender struct {
	cfg *Config

	msgs   []qmsg
	head   int   // first message not fully acked
	cur    int   // message holding nxt
	nxt    int64 // next PSN to send
	una    int64 // oldest unacked PSN
	end    int64 // one past the last PSN posted
	maxNxt int64 // highest nxt ever reached (PSNs below it are resends)

	nextSend sim.Time // when the rate limiter lets the next packet go
	lastSent sim.Time // when the last data packet went out
	lastWire int32    // and its wire size (for re-pacing on a rate change)

	rtoArmed    bool
	rtoDeadline sim.Time

	rp ReactionPoint
	// hp is HPCC's state when Config.HPCC.Enabled (the rate and window
	// come from it then), else nil: a QP of the other runs does not carry
	// its 280 bytes (the QP itself is 352; a 512-rank all-to-all has
	// 262,144).
	hp *HPCC
}

type qmsg struct {
	id          int32
	first, last int64 // PSN range
	lastPayload int32
}

// Data is the header of a data packet: what the sender puts in it, and
// what the receiver reads (CE is set by the fabric).
type Data struct {
	PSN     int64
	Msg     int32 // the caller's message id (Post)
	Payload int32 // MTU, or the rest in a message's last packet
	Wire    int32 // Payload + Config.Overhead
	// Last marks the message's final packet.
	Last bool
	// Retransmit: the PSN was sent before (go-back-N).
	Retransmit bool
	// CE is the ECN congestion-experienced mark.
	CE bool
}

// NewSender returns a sender on a link of lineRate; cfg is shared, not
// copied (the Transport's).
func NewSender(cfg *Config, lineRate units.Rate) *Sender {
	s := new(Sender)
	s.Init(cfg, lineRate)
	return s
}

// Init (re)initialises s in place, so a QP can embed a Sender by value.
func (s *Sender) Init(cfg *Config, lineRate units.Rate) {
	*s = Sender{cfg: cfg}
	s.rp.Init(cfg.DCQCN, lineRate)
	s.initHPCC(lineRate)
}

// InitShared is Init with cfg.DCQCN capped for lineRate
// (DCQCNParams.ForLine) in dcqcn, which the reaction point shares
// (ReactionPoint.InitShared): what a NIC gives each of its QPs.
func (s *Sender) InitShared(cfg *Config, lineRate units.Rate, dcqcn *DCQCNParams) {
	*s = Sender{cfg: cfg}
	s.rp.InitShared(dcqcn, lineRate)
	s.initHPCC(lineRate)
}

func (s *Sender) initHPCC(lineRate units.Rate) {
	if s.cfg.HPCC.Enabled {
		s.hp = new(HPCC)
		s.hp.Init(&s.cfg.HPCC, lineRate, s.cfg.HPCC.BaseRTT)
	}
}

// SetBaseRTT sets HPCC's base RTT T (when Config.HPCC.BaseRTT leaves it
// to each QP's path); call it before the first packet.
func (s *Sender) SetBaseRTT(t sim.Time) {
	if s.cfg.HPCC.Enabled {
		s.hp.Init(&s.cfg.HPCC, s.rp.line, t)
	}
}

// Post queues message msg of bytes behind the ones posted before.
func (s *Sender) Post(msg int32, bytes int64) {
	mtu := int64(s.cfg.MTU)
	n := (bytes + mtu - 1) / mtu
	if n < 1 {
		n = 1
	}
	last := bytes - (n-1)*mtu
	s.msgs = append(s.msgs, qmsg{id: msg, first: s.end, last: s.end + n - 1, lastPayload: int32(last)})
	s.end += n
}

// End is the PSN the next posted message starts at.
func (s *Sender) End() int64 { return s.end }

// CanSend reports whether a packet is waiting to be sent and the window
// (Config.MaxInflight) lets it go; SendAt says when the rate limiter does.
func (s *Sender) CanSend() bool {
	if s.nxt >= s.end {
		return false
	}
	if mi := s.cfg.MaxInflight; mi > 0 && (s.nxt-s.una)*int64(s.cfg.MTU) >= mi {
		return false
	}
	if s.cfg.HPCC.Enabled && (s.nxt-s.una)*int64(s.cfg.MTU) >= s.hp.Window() {
		return false
	}
	return true
}

// SendAt is the earliest time the rate limiter lets the next packet go.
func (s *Sender) SendAt() sim.Time { return s.nextSend }

// Next is the data packet for PSN nxt, sent at now; the sender moves past
// it, reports it to the reaction point, paces the next one and arms the
// retransmission timer. Call it only when CanSend.
func (s *Sender) Next(now sim.Time) Data {
	cfg := s.cfg
	// A message posted after the previous one was fully sent (but not yet
	// acknowledged) starts past cur's last PSN: move on to it first, or its
	// first packet would be labelled as the old message's.
	for s.cur < len(s.msgs)-1 && s.nxt > s.msgs[s.cur].last {
		s.cur++
	}
	m := &s.msgs[s.cur]
	d := Data{PSN: s.nxt, Msg: m.id, Payload: cfg.MTU}
	if s.nxt == m.last {
		d.Payload = m.lastPayload
		d.Last = true
	}
	d.Wire = d.Payload + cfg.Overhead
	d.Retransmit = s.nxt < s.maxNxt
	s.nxt++
	if s.nxt > s.maxNxt {
		s.maxNxt = s.nxt
	}
	if s.nxt > m.last && s.cur < len(s.msgs)-1 {
		s.cur++
	}
	if cfg.DCQCN.Enabled {
		s.rp.OnSent(now, units.Size(d.Wire))
	}
	s.lastSent, s.lastWire = now, d.Wire
	s.nextSend = s.paced()
	if cfg.RTO > 0 {
		s.rtoArmed = true
		s.rtoDeadline = now + cfg.RTO
	}
	return d
}

// paced is when the rate limiter lets the packet after the last one go.
func (s *Sender) paced() sim.Time {
	if r := s.Rate(); r < s.rp.line {
		return s.lastSent + units.SerializationTime(units.Size(s.lastWire), r)
	}
	return s.lastSent
}

// OnAck handles a cumulative acknowledgement at now: every PSN below psn
// arrived. It reports whether that acknowledged anything new (an older
// or repeated ACK changes nothing).
func (s *Sender) OnAck(now sim.Time, psn int64) bool {
	if psn <= s.una {
		return false
	}
	s.una = psn
	for s.head < len(s.msgs) && s.msgs[s.head].last < psn {
		s.head++
	}
	if s.head == len(s.msgs) && s.una >= s.end {
		// Everything acked: recycle the message list.
		s.msgs = s.msgs[:0]
		s.head, s.cur = 0, 0
	} else if s.cur < s.head {
		s.cur = s.head
	}
	if s.nxt < psn {
		s.nxt = psn
		for s.cur < len(s.msgs)-1 && s.msgs[s.cur].last < psn {
			s.cur++
		}
	}
	if s.una >= s.end {
		s.rtoArmed = false
	} else {
		s.rtoDeadline = now + s.cfg.RTO
	}
	return true
}

// Rewind restarts sending from psn, or from una if psn is below it
// (go-back-N: a NACK's second half, or a timeout).
func (s *Sender) Rewind(psn int64) {
	if psn < s.una {
		psn = s.una
	}
	s.nxt = psn
	s.cur = s.head
	for s.cur < len(s.msgs)-1 && s.msgs[s.cur].last < psn {
		s.cur++
	}
}

// RTODeadline is when the retransmission timer expires, or sim.Never.
func (s *Sender) RTODeadline() sim.Time {
	if !s.rtoArmed {
		return sim.Never
	}
	return s.rtoDeadline
}

// OnRTO runs the retransmission timer at now. It reports a timeout: the
// timer expired with packets unacknowledged or unsent, the sender went back
// to una and re-armed (the NIC counts it and wakes its port).
func (s *Sender) OnRTO(now sim.Time) bool {
	if !s.rtoArmed || now < s.rtoDeadline {
		return false
	}
	if s.una >= s.nxt && s.nxt >= s.end {
		s.rtoArmed = false
		return false
	}
	s.Rewind(s.una)
	s.rtoDeadline = now + s.cfg.RTO
	return true
}

// OnCNP hands a congestion notification that arrived at now to the
// reaction point (when DCQCN is enabled).
func (s *Sender) OnCNP(now sim.Time) {
	if s.cfg.DCQCN.Enabled {
		s.rp.OnCNP(now)
	}
}

// RateDeadline is when DCQCN's timers next have work, or NoDeadline.
func (s *Sender) RateDeadline() sim.Time { return s.rp.NextDeadline() }

// OnRateTimer runs DCQCN's timers due by now.
func (s *Sender) OnRateTimer(now sim.Time) { s.rp.Advance(now) }

// Repace recomputes the pacing wait of the next packet at the current
// rate, as a token bucket would after a rate increase; it reports whether
// SendAt moved earlier (it never moves later).
func (s *Sender) Repace() bool {
	if next := s.paced(); next < s.nextSend {
		s.nextSend = next
		return true
	}
	return false
}

// Rate is the current rate: HPCC's, or DCQCN's.
func (s *Sender) Rate() units.Rate {
	if s.cfg.HPCC.Enabled {
		return s.hp.Rate()
	}
	return s.rp.Rate()
}

// OnINT hands HPCC the telemetry an ACK for psn echoed (when HPCC is
// enabled); it reports whether the rate changed (the NIC then re-paces).
func (s *Sender) OnINT(psn int64, rec *fabric.INTRecord) bool {
	return s.cfg.HPCC.Enabled && s.hp.OnAck(psn, s.maxNxt, rec)
}

// HPCC is the QP's HPCC state (for inspection and tests), nil unless
// Config.HPCC.Enabled.
func (s *Sender) HPCC() *HPCC { return s.hp }

// ReactionPoint is the QP's DCQCN state (for inspection and tests).
func (s *Sender) ReactionPoint() *ReactionPoint { return &s.rp }

// Unacked reports whether some posted packet is not acknowledged yet.
func (s *Sender) Unacked() bool { return s.una < s.end }

// PSNs returns una, nxt and end: the oldest unacknowledged PSN, the next to
// send and one past the last posted.
func (s *Sender) PSNs() (una, nxt, end int64) { return s.una, s.nxt, s.end }
