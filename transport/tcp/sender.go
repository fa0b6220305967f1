package tcp

import (
	"fabriclab/sim"
	"fabriclab/units"
)

// Sender is the sending half of one connection:
//
//	s := NewSender(params)
//	s.Submit(now, id, length)   // append a message to the stream
//	s.NextSegment(now)          // the link is free: the next segment, if the window allows
//	s.HasSegment()              // would NextSegment return one?
//	s.OnAck(now, ack)           // an ACK arrived
//	s.NextDeadline(); s.Advance(now)   // the retransmission timer
//	s.TakeAcked(buf)            // messages fully acknowledged since last time
//
// Segments are pulled when the link is free, so the window is checked at
// the moment of sending (an ACK that opens the window makes HasSegment true;
// the caller then wakes its NIC). Times must not go backwards.
//
// # Window (RFC 5681 with byte counting, RFC 3465)
//
// In slow start (cwnd < ssthresh) every ACK that acknowledges N new bytes
// adds min(N, MSS). In congestion avoidance acknowledged bytes accumulate
// and each full cwnd of them adds one MSS. A segment may be sent while
// bytes in flight + its length ≤ cwnd (one segment may always be in flight).
//
// # ECN (DCTCP §3.1, or RFC 3168 in Reno mode)
//
// DCTCP observes windows of data: a window is the data outstanding when it
// opens (at the first ACK of a flight, or when the previous window closes
// with data in flight) and closes when its last byte is acknowledged. Over it the sender counts bytes
// acknowledged and bytes acknowledged by ACKs with ECE; at its end
// F = marked/acked and α ← (1−g)·α + g·F. An ACK with ECE, outside a
// reduction already in progress, sets cwnd ← max(MinCwnd·MSS,
// ⌊cwnd·(1 − α/2)⌋) and ssthresh ← cwnd; no further reduction happens until
// the data outstanding at that moment is acknowledged (once per window, as
// RFC 3168's CWR), and cwnd does not grow meanwhile. Reno mode does the same
// with α fixed at 1 (a halving). The α update runs before the reaction on
// the same ACK. The reduction ends with the first ACK beyond the data that
// was outstanding at the cut: an ECE on the ACK of the window's last byte
// still belongs to that window.
//
// # Loss
//
// DupAckThreshold duplicate ACKs (ACKs that acknowledge nothing new while
// data is outstanding) trigger fast retransmit of the first unacknowledged
// segment: ssthresh ← max(flight/2, MinCwnd·MSS), cwnd ← ssthresh, and
// recovery lasts until everything sent before the loss is acknowledged;
// a partial ACK in recovery retransmits the next hole at once (NewReno,
// RFC 6582, without window inflation). The retransmission timer runs while
// data is outstanding, restarts on every ACK of new data, and on expiry sets
// ssthresh ← max(flight/2, MinCwnd·MSS), cwnd ← 1 MSS, resends from the first
// unacknowledged byte (go-back-N) and doubles RTO up to MaxRTO (RFC 6298).
// RTO = max(MinRTO, SRTT + 4·RTTVAR) from samples now − Echo of ACKs of new
// data, with SRTT ← 7/8·SRTT + 1/8·R and RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R|
// in integer picoseconds; a fresh sample ends the backoff.
type Sender struct {
	p    Params
	mss  units.Size
	last sim.Time

	una, nxt, end units.Size // first unacked, next new, end of the stream

	cwnd, ssthresh units.Size
	caBytes        units.Size // bytes acked towards the next CA increase

	alpha             float64
	winEnd            units.Size // end of the current DCTCP observation window
	winOpen           bool       // a window is being observed
	winAcked, winMark units.Size
	cwrEnd            units.Size // no ECN reduction until una reaches this
	inCWR             bool

	dupAcks    int
	recovering bool
	recover    units.Size // nxt when recovery started
	rtxAt      units.Size // a single segment to retransmit now (−1: none)
	highTx     units.Size // highest byte ever sent (for the Retransmit flag)

	srtt, rttvar units.Duration
	hasRTT       bool
	rto          units.Duration
	rtoAt        sim.Time
	backoffs     int

	msgs   []framed // submitted messages not yet fully acked, in stream order
	head   int
	cur    int // index in msgs of the message holding the last segment sent
	acked  []Done
	Counts Counts
}

type framed struct {
	id  uint64
	end units.Size
}

// Done is a message whose every byte was acknowledged (sender) or delivered
// in order (receiver), at At.
type Done struct {
	ID uint64
	At sim.Time
}

// Counts are the sender's counters for a run.
type Counts struct {
	Segments, Retransmits   uint64
	FastRetransmits, RTOs   uint64
	ECNCuts, ECEAcks, Acks  uint64
	AlphaUpdates            uint64
	BytesAcked, BytesMarked units.Size
}

// NewSender returns a sender; it panics on invalid Params (validate them
// once where they are read).
func NewSender(p Params) *Sender {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	s := &Sender{p: p, mss: p.MSS}
	s.cwnd = units.Size(p.InitCwnd) * p.MSS
	s.ssthresh = math64
	s.alpha = p.InitAlpha
	s.rto = p.InitRTO
	s.rtoAt = NoDeadline
	s.rtxAt = -1
	return s
}

const math64 = units.Size(1<<63 - 1)

// Cwnd is the congestion window in bytes.
func (s *Sender) Cwnd() units.Size { return s.cwnd }

// Ssthresh is the slow-start threshold in bytes (huge until the first cut).
func (s *Sender) Ssthresh() units.Size { return s.ssthresh }

// Alpha is DCTCP's α.
func (s *Sender) Alpha() float64 { return s.alpha }

// RTO is the current retransmission timeout, backoff included.
func (s *Sender) RTO() units.Duration { return s.rto }

// InFlight is the bytes sent and not yet acknowledged.
func (s *Sender) InFlight() units.Size { return s.nxt - s.una }

// Unacked is the bytes submitted and not yet acknowledged.
func (s *Sender) Unacked() units.Size { return s.end - s.una }

// Acked is the cumulative acknowledged offset of the stream.
func (s *Sender) Acked() units.Size { return s.una }

func (s *Sender) clock(now sim.Time) sim.Time {
	if now < s.last {
		return s.last
	}
	s.last = now
	return now
}

// Submit appends a message of length bytes to the stream. The caller learns
// of its completion from TakeAcked, in submission order.
func (s *Sender) Submit(now sim.Time, id uint64, length units.Size) {
	s.clock(now)
	if length <= 0 {
		return
	}
	s.end += length
	s.msgs = append(s.msgs, framed{id: id, end: s.end})
}

// End is the stream's length so far: every message submitted.
func (s *Sender) End() units.Size { return s.end }

// TakeAcked appends the messages fully acknowledged since the previous call.
func (s *Sender) TakeAcked(dst []Done) []Done {
	dst = append(dst, s.acked...)
	s.acked = s.acked[:0]
	return dst
}

// HasSegment reports whether NextSegment would return a segment.
func (s *Sender) HasSegment() bool {
	if s.rtxAt >= 0 {
		return true
	}
	if s.nxt >= s.end {
		return false
	}
	n := min(s.mss, s.end-s.nxt)
	return s.nxt == s.una || s.nxt-s.una+n <= s.cwnd
}

// NextSegment returns the segment to send now, if any: a pending fast
// retransmission first, else new data the window allows.
func (s *Sender) NextSegment(now sim.Time) (Segment, bool) {
	now = s.clock(now)
	var seg Segment
	switch {
	case s.rtxAt >= 0:
		seg = Segment{Seq: s.rtxAt, Len: min(s.mss, s.end-s.rtxAt), Retransmit: true}
		s.rtxAt = -1
	case s.HasSegment():
		seg = Segment{Seq: s.nxt, Len: min(s.mss, s.end-s.nxt)}
		seg.Retransmit = seg.Seq < s.highTx
		s.nxt += seg.Len
		s.highTx = max(s.highTx, s.nxt)
	default:
		return Segment{}, false
	}
	seg.SentAt = now
	seg.Msg = s.msgAt(seg.Seq)
	s.Counts.Segments++
	if seg.Retransmit {
		s.Counts.Retransmits++
	}
	if s.rtoAt == NoDeadline {
		s.rtoAt = now + s.rto
	}
	return seg, true
}

// NextDeadline is when the retransmission timer expires, or NoDeadline.
func (s *Sender) NextDeadline() sim.Time { return s.rtoAt }

// Advance fires the retransmission timer if it is due by now.
func (s *Sender) Advance(now sim.Time) {
	now = s.clock(now)
	if s.rtoAt > now {
		return
	}
	if s.una >= s.nxt {
		s.rtoAt = NoDeadline
		return
	}
	s.Counts.RTOs++
	s.ssthresh = max((s.nxt-s.una)/2, units.Size(s.p.MinCwnd)*s.mss)
	s.cwnd = s.mss
	s.caBytes = 0
	s.nxt = s.una // go-back-N
	s.rtxAt = -1
	s.dupAcks = 0
	s.recovering = false
	s.inCWR = false
	s.backoffs++
	s.rto = min(2*s.rto, s.p.MaxRTO)
	s.rtoAt = NoDeadline // re-armed by the retransmission
}

// OnAck handles an acknowledgement that arrived at now.
func (s *Sender) OnAck(now sim.Time, a Ack) {
	now = s.clock(now)
	s.Counts.Acks++
	if s.p.NoECN {
		a.ECE = false
	}
	if a.ECE {
		s.Counts.ECEAcks++
	}
	if a.Ack > s.highTx || a.Ack < s.una {
		return // acknowledges data never sent, or old: ignore
	}
	newly := a.Ack - s.una
	if newly == 0 {
		if s.nxt > s.una {
			s.dupAck()
		}
		return
	}
	s.una = a.Ack
	s.nxt = max(s.nxt, s.una) // an ACK beyond nxt after go-back-N
	if s.rtxAt < s.una {
		// The fast retransmission not sent yet is acknowledged already
		// (reordered segments made the duplicate ACKs): never resend
		// below una (a partial ACK below sets the next hole again). None
		// pending (−1) is below una too, and stays none.
		s.rtxAt = -1
	}
	s.dupAcks = 0
	s.Counts.BytesAcked += newly
	s.ackMessages(now)

	// RTT sample and timer restart (RFC 6298 5.3).
	if a.Echo > 0 && a.Echo <= now {
		s.sample(now - a.Echo)
	}
	if s.una < s.nxt {
		s.rtoAt = now + s.rto
	} else {
		s.rtoAt = NoDeadline
	}

	// DCTCP observation window.
	if !s.winOpen {
		s.winEnd, s.winOpen = s.nxt, true
	}
	s.winAcked += newly
	if a.ECE {
		s.winMark += newly
		s.Counts.BytesMarked += newly
	}
	if s.una >= s.winEnd {
		if s.p.Mode == DCTCP && s.winAcked > 0 {
			f := float64(s.winMark) / float64(s.winAcked)
			g := s.p.G
			s.alpha = float64((1-g)*s.alpha) + float64(g*f) // no FMA: same bits everywhere
			s.Counts.AlphaUpdates++
		}
		s.winAcked, s.winMark = 0, 0
		// The next window is the data now outstanding; if none is, it starts
		// with the next flight (at its first ACK), not with one segment.
		s.winEnd, s.winOpen = s.nxt, s.nxt > s.una
	}
	if s.inCWR && s.una > s.cwrEnd { // this ACK covers data sent after the cut
		s.inCWR = false
	}

	if s.recovering {
		if s.una >= s.recover {
			s.recovering = false
		} else {
			s.rtxAt = s.una // partial ACK: the next hole
			return
		}
	}

	if a.ECE && !s.inCWR {
		a := s.alpha
		if s.p.Mode == Reno {
			a = 1
		}
		s.cwnd = max(units.Size(float64(s.cwnd)*(1-a/2)), units.Size(s.p.MinCwnd)*s.mss)
		s.ssthresh = s.cwnd
		s.caBytes = 0
		s.inCWR = true
		s.cwrEnd = s.nxt
		s.Counts.ECNCuts++
		return
	}
	if !s.inCWR { // no growth while a reduction is in progress (RFC 3168 CWR)
		s.grow(newly)
	}
}

func (s *Sender) grow(newly units.Size) {
	if s.cwnd < s.ssthresh {
		s.cwnd += min(newly, s.mss)
		return
	}
	s.caBytes += newly
	if s.caBytes >= s.cwnd {
		s.caBytes -= s.cwnd
		s.cwnd += s.mss
	}
}

// msgAt is the id of the message holding stream byte seq (seq is never
// below una, so the message is at or after head). The cursor moves forward
// with new data and back for a retransmission: amortised O(1).
func (s *Sender) msgAt(seq units.Size) uint64 {
	c := min(max(s.cur, s.head), len(s.msgs)-1)
	for c < len(s.msgs)-1 && s.msgs[c].end <= seq {
		c++
	}
	for c > s.head && s.msgs[c-1].end > seq {
		c--
	}
	s.cur = c
	return s.msgs[c].id
}

func (s *Sender) ackMessages(now sim.Time) {
	for s.head < len(s.msgs) && s.msgs[s.head].end <= s.una {
		s.acked = append(s.acked, Done{ID: s.msgs[s.head].id, At: now})
		s.head++
	}
	if s.head == len(s.msgs) {
		s.msgs, s.head, s.cur = s.msgs[:0], 0, 0
	} else if s.head >= 64 && 2*s.head >= len(s.msgs) {
		// A connection that never drains: drop the acknowledged prefix so
		// the list stays bounded by what is outstanding.
		n := copy(s.msgs, s.msgs[s.head:])
		s.msgs = s.msgs[:n]
		s.cur = max(s.cur-s.head, 0)
		s.head = 0
	}
}

func (s *Sender) dupAck() {
	s.dupAcks++
	if s.dupAcks != s.p.DupAckThreshold || s.recovering {
		return
	}
	s.Counts.FastRetransmits++
	s.ssthresh = max((s.nxt-s.una)/2, units.Size(s.p.MinCwnd)*s.mss)
	s.cwnd = s.ssthresh
	s.caBytes = 0
	s.recovering = true
	s.recover = s.nxt
	s.rtxAt = s.una
	// A loss is a congestion signal too: no extra ECN cut for this window.
	s.inCWR = true
	s.cwrEnd = s.nxt
}

func (s *Sender) sample(r units.Duration) {
	if !s.hasRTT {
		s.srtt, s.rttvar, s.hasRTT = r, r/2, true
	} else {
		d := s.srtt - r
		if d < 0 {
			d = -d
		}
		s.rttvar = s.rttvar - s.rttvar/4 + d/4
		s.srtt = s.srtt - s.srtt/8 + r/8
	}
	s.rto = min(max(s.srtt+4*s.rttvar, s.p.MinRTO), s.p.MaxRTO)
	s.backoffs = 0
}
