package tcp

// Tests named after the claim they check. Expected values are exact and
// worked out by hand in the comments, with MSS = 1000 B so that windows are
// round numbers.

import (
	"reflect"
	"testing"

	"fabriclab/sim"
	"fabriclab/units"
)

const ms = units.Millisecond

func params(mode Mode) Params {
	p := DefaultParams()
	p.Mode = mode
	p.MSS = 1000
	return p
}

// flight sends every segment the window allows at now.
func flight(s *Sender, now sim.Time) []Segment {
	var out []Segment
	for {
		seg, ok := s.NextSegment(now)
		if !ok {
			return out
		}
		out = append(out, seg)
	}
}

// round sends one flight and acknowledges it segment by segment (ACK i
// carries ECE = marked(i)), without sending in between: one round is then
// exactly one DCTCP observation window. It returns the flight size.
func round(t *testing.T, s *Sender, now sim.Time, marked func(i int) bool) int {
	t.Helper()
	segs := flight(s, now)
	for i, seg := range segs {
		s.OnAck(now+1, Ack{Ack: seg.Seq + seg.Len, ECE: marked(i), Echo: seg.SentAt})
	}
	return len(segs)
}

func none(int) bool { return false }
func all(int) bool  { return true }
func first(i int) bool {
	return i == 0
}

func TestSlowStartAddsOneMSSPerAckedSegment(t *testing.T) {
	s := NewSender(params(DCTCP))
	s.Submit(0, 1, 1<<30)
	for i, want := range []struct {
		flight int
		cwnd   units.Size
	}{{10, 20000}, {20, 40000}, {40, 80000}} {
		if n := round(t, s, sim.Time(i)*ms, none); n != want.flight || s.Cwnd() != want.cwnd {
			t.Fatalf("round %d: flight %d cwnd %d, want %d and %d", i, n, s.Cwnd(), want.flight, want.cwnd)
		}
	}
}

// In congestion avoidance each cwnd of acknowledged bytes adds one MSS:
// cwnd 10000 = ssthresh, ten 1000-byte ACKs → 11000; eleven more → 12000.
func TestCongestionAvoidanceAddsOneMSSPerWindow(t *testing.T) {
	s := NewSender(params(DCTCP))
	s.ssthresh = 10000
	s.Submit(0, 1, 1<<30)
	round(t, s, 0, none)
	if s.Cwnd() != 11000 {
		t.Fatalf("cwnd %d, want 11000", s.Cwnd())
	}
	round(t, s, ms, none)
	if s.Cwnd() != 12000 {
		t.Fatalf("cwnd %d, want 12000", s.Cwnd())
	}
}

// DCTCP §3.1: α ← (1−g)α + gF once per window, cwnd ← cwnd(1 − α/2) once
// per window with ECE. g = 1/16, α starts at 1.
//
//	round 1: 10 segments, none marked: cwnd 20000, α = 15/16
//	round 2: 20 segments, none marked: cwnd 40000, α = 225/256
//	round 3: 40 segments, the first ACK marked: cut at once with α = 225/256,
//	         40000·(1 − 225/512) = 22421.875 → 22421; no growth in CWR;
//	         F = 1000/40000, α = 15/16·225/256 + 1/16·0.025
//	round 4: 22 segments (22000 ≤ 22421), all marked: one cut with α3,
//	         F = 1, α4 = 15/16·α3 + 1/16
func TestDCTCPAlphaAndCutFollowThePaper(t *testing.T) {
	s := NewSender(params(DCTCP))
	s.Submit(0, 1, 1<<40)
	round(t, s, 0, none)
	if s.Cwnd() != 20000 || s.Alpha() != 15.0/16 {
		t.Fatalf("round 1: cwnd %d α %v", s.Cwnd(), s.Alpha())
	}
	round(t, s, 1*ms, none)
	if s.Cwnd() != 40000 || s.Alpha() != 225.0/256 {
		t.Fatalf("round 2: cwnd %d α %v", s.Cwnd(), s.Alpha())
	}
	if n := round(t, s, 2*ms, first); n != 40 || s.Cwnd() != 22421 || s.Ssthresh() != 22421 {
		t.Fatalf("round 3: flight %d cwnd %d ssthresh %d", n, s.Cwnd(), s.Ssthresh())
	}
	a3 := float64(15.0/16*(225.0/256)) + float64(1.0/16*0.025)
	if s.Alpha() != a3 {
		t.Fatalf("round 3: α %v, want %v", s.Alpha(), a3)
	}
	if n := round(t, s, 3*ms, all); n != 22 {
		t.Fatalf("round 4: flight %d", n)
	}
	wantCwnd := units.Size(float64(22421) * (1 - a3/2))
	a4 := float64(15.0/16*a3) + float64(1.0/16)
	if s.Cwnd() != wantCwnd || s.Alpha() != a4 || s.Counts.ECNCuts != 2 {
		t.Fatalf("round 4: cwnd %d α %v cuts %d; want %d, %v, 2", s.Cwnd(), s.Alpha(), s.Counts.ECNCuts, wantCwnd, a4)
	}
	if wantCwnd != 13166 { // α3 = 0.825537109375: 22421·0.5872314453125 = 13166.4
		t.Fatalf("hand value: %d", wantCwnd)
	}
}

// After N windows without marks α = (15/16)^N; with every byte marked it
// stays at 1.
func TestDCTCPAlphaDecaysByOneMinusGPerCleanWindow(t *testing.T) {
	s := NewSender(params(DCTCP))
	s.Submit(0, 1, 1<<50)
	want := 1.0
	for n := 1; n <= 8; n++ {
		round(t, s, sim.Time(n)*ms, none)
		want *= 15.0 / 16
		if s.Alpha() != want || s.Counts.AlphaUpdates != uint64(n) {
			t.Fatalf("after %d windows α = %v, want %v", n, s.Alpha(), want)
		}
	}
	m := NewSender(params(DCTCP))
	m.Submit(0, 1, 1<<30)
	for n := range 5 {
		round(t, m, sim.Time(n)*ms, all)
	}
	if m.Alpha() != 1 {
		t.Fatalf("all marked: α %v", m.Alpha())
	}
}

// Plain TCP mode halves once per window on ECE, whatever α says.
func TestRenoHalvesOncePerWindowOnECE(t *testing.T) {
	s := NewSender(params(Reno))
	s.Submit(0, 1, 1<<30)
	round(t, s, 0, none)   // 20000
	round(t, s, ms, none)  // 40000
	round(t, s, 2*ms, all) // one halving: 20000
	if s.Cwnd() != 20000 || s.Counts.ECNCuts != 1 || s.Alpha() != 1 {
		t.Fatalf("cwnd %d cuts %d α %v", s.Cwnd(), s.Counts.ECNCuts, s.Alpha())
	}
	round(t, s, 3*ms, all) // 20 segments: 10000
	if s.Cwnd() != 10000 {
		t.Fatalf("cwnd %d", s.Cwnd())
	}
	for range 5 {
		round(t, s, 4*ms, all)
	}
	if s.Cwnd() != 2000 {
		t.Fatalf("cwnd %d, want the floor of 2 MSS", s.Cwnd())
	}
}

// RFC 5681: the third duplicate ACK retransmits the first unacknowledged
// segment, ssthresh = flight/2 and cwnd = ssthresh. Ten segments, the second
// lost: the first ACK acknowledges 1000 (cwnd 11000, flight 9000); segments
// 3–10 each produce a duplicate ACK for 1000; the third triggers the
// retransmission with ssthresh = cwnd = 4500. The repaired hole lets the
// receiver acknowledge all 10000 at once, which ends recovery.
func TestFastRetransmitOnThirdDuplicateAck(t *testing.T) {
	s := NewSender(params(DCTCP))
	r := NewReceiver(1, 0)
	s.Submit(0, 1, 10000)
	var acks []Ack
	for i, seg := range flight(s, 0) {
		if i == 1 {
			continue // lost
		}
		acks = r.OnSegment(1, seg, acks[:0])
		for _, a := range acks {
			s.OnAck(2, a)
		}
		if i == 4 { // ACKs for segments 3, 4 and 5 were the duplicates 1, 2, 3
			if s.Counts.FastRetransmits != 1 || s.Ssthresh() != 4500 || s.Cwnd() != 4500 {
				t.Fatalf("after 3 dup ACKs: fast retransmits %d ssthresh %d cwnd %d", s.Counts.FastRetransmits, s.Ssthresh(), s.Cwnd())
			}
		}
		if i == 3 && s.HasSegment() {
			t.Fatal("retransmitted after 2 duplicate ACKs")
		}
	}
	rtx, ok := s.NextSegment(3)
	if !ok || rtx.Seq != 1000 || rtx.Len != 1000 || !rtx.Retransmit {
		t.Fatalf("retransmission %+v", rtx)
	}
	if s.HasSegment() {
		t.Fatal("more than one retransmission")
	}
	acks = r.OnSegment(4, rtx, acks[:0])
	if len(acks) != 1 || acks[0].Ack != 10000 {
		t.Fatalf("ack after the repair %+v", acks)
	}
	s.OnAck(5, acks[0])
	if s.recovering || s.InFlight() != 0 || s.Counts.FastRetransmits != 1 {
		t.Fatalf("recovery not over: in flight %d", s.InFlight())
	}
	if got := s.TakeAcked(nil); !reflect.DeepEqual(got, []Done{{ID: 1, At: 5}}) {
		t.Fatalf("acked %+v", got)
	}
}

// Segment 2 of 10 comes late (reordered, not lost): the three duplicate
// ACKs set up a fast retransmission of it, but the ACK for everything
// arrives before the sender sends it. The retransmission is dropped: the
// sender never resends below una (it once did, and with every message
// acknowledged it looked its message up in an empty list).
func TestAcknowledgedFastRetransmissionIsNotSent(t *testing.T) {
	s := NewSender(params(DCTCP))
	r := NewReceiver(1, 0)
	s.Submit(0, 1, 10000)
	segs := flight(s, 0)
	var acks []Ack
	for i, seg := range append(append(segs[:1:1], segs[2:]...), segs[1]) { // 2 last
		acks = r.OnSegment(1, seg, acks[:0])
		for _, a := range acks {
			s.OnAck(2, a)
		}
		if i == 4 && (s.Counts.FastRetransmits != 1 || !s.HasSegment()) {
			t.Fatalf("after 3 dup ACKs: %d fast retransmits, a segment pending %v", s.Counts.FastRetransmits, s.HasSegment())
		}
	}
	if s.Acked() != 10000 || s.HasSegment() {
		t.Fatalf("acknowledged %d, a segment pending %v", s.Acked(), s.HasSegment())
	}
	if seg, ok := s.NextSegment(3); ok {
		t.Fatalf("sent %+v below una", seg)
	}
	if got := s.TakeAcked(nil); !reflect.DeepEqual(got, []Done{{ID: 1, At: 2}}) {
		t.Fatalf("acked %+v", got)
	}
}

// RFC 6298: the timer fires InitRTO after the first send; each expiry
// resets cwnd to 1 MSS, resends from the first unacknowledged byte and
// doubles RTO, up to MaxRTO. A fresh RTT sample ends the backoff:
// SRTT = R, RTTVAR = R/2, RTO = max(MinRTO, 3R).
func TestRTOBacksOffExponentiallyAndRecovers(t *testing.T) {
	p := params(DCTCP)
	p.MaxRTO = 100 * ms
	s := NewSender(p)
	s.Submit(0, 1, 5000)
	flight(s, 0)
	now := sim.Time(0)
	for i, want := range []units.Duration{20 * ms, 40 * ms, 80 * ms, 100 * ms, 100 * ms} {
		d := s.NextDeadline()
		prev := []units.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 100 * ms}[i]
		if d != now+prev {
			t.Fatalf("expiry %d: deadline %v, want %v", i+1, d, now+prev)
		}
		now = d
		s.Advance(now)
		if s.RTO() != want || s.Cwnd() != 1000 || s.Ssthresh() != 2000 && i > 0 {
			t.Fatalf("expiry %d: RTO %v cwnd %d ssthresh %d", i+1, s.RTO(), s.Cwnd(), s.Ssthresh())
		}
		seg, ok := s.NextSegment(now)
		if !ok || seg.Seq != 0 || !seg.Retransmit || s.HasSegment() {
			t.Fatalf("expiry %d: resend %+v %v", i+1, seg, ok)
		}
	}
	if s.Counts.RTOs != 5 {
		t.Fatalf("RTOs %d", s.Counts.RTOs)
	}
	// The first expiry's ssthresh: 5000 in flight → 2500.
	// The ACK of the last resend: R = 3 ms → RTO = max(10 ms, 9 ms) = 10 ms.
	s.OnAck(now+3*ms, Ack{Ack: 1000, Echo: now})
	if s.RTO() != 10*ms || s.NextDeadline() != NoDeadline || s.Cwnd() != 2000 {
		t.Fatalf("after a sample: RTO %v deadline %v cwnd %d", s.RTO(), s.NextDeadline(), s.Cwnd())
	}
	if n := len(flight(s, now+3*ms)); n != 2 || s.NextDeadline() != now+13*ms {
		t.Fatalf("flight %d, deadline %v", n, s.NextDeadline())
	}
	// R = 4 ms: SRTT = 3.125 ms, RTTVAR = 0.75·1.5 + 0.25·1 = 1.375 ms,
	// RTO = 3.125 + 5.5 = 8.625 ms → MinRTO 10 ms. With MinRTO 1 ms: 8.625.
	s.p.MinRTO = ms
	s.OnAck(now+7*ms, Ack{Ack: 2000, Echo: now + 3*ms})
	if s.RTO() != 8_625*units.Microsecond {
		t.Fatalf("RTO %v, want 8.625ms", s.RTO())
	}
}

func TestFirstRTOHalvesTheFlightIntoSsthresh(t *testing.T) {
	s := NewSender(params(DCTCP))
	s.Submit(0, 1, 5000)
	flight(s, 0)
	s.Advance(10 * ms)
	if s.Ssthresh() != 2500 || s.Cwnd() != 1000 {
		t.Fatalf("ssthresh %d cwnd %d", s.Ssthresh(), s.Cwnd())
	}
}

// One stream, messages in order: a short message submitted behind a long
// one is acknowledged and delivered only after all of the long one, and a
// loss in the long one holds the short one back until it is repaired, even
// though every byte of the short one has arrived (head-of-line blocking).
func TestMessagesCompleteInStreamOrderBehindALoss(t *testing.T) {
	s := NewSender(params(DCTCP))
	r := NewReceiver(1, 0)
	s.Submit(0, 1, 5000) // A
	s.Submit(0, 2, 500)  // B
	r.Expect(1, 5000)
	r.Expect(2, 500)
	segs := flight(s, 0)
	if len(segs) != 6 || segs[5].Seq != 5000 || segs[5].Len != 500 {
		t.Fatalf("flight %+v", segs)
	}
	var acks []Ack
	for i, seg := range segs {
		if i == 0 {
			continue // A's first segment is lost
		}
		acks = r.OnSegment(sim.Time(10+i), seg, acks[:0])
		for _, a := range acks {
			s.OnAck(sim.Time(20+i), a)
		}
	}
	if got := r.TakeDelivered(nil); len(got) != 0 {
		t.Fatalf("delivered behind a hole: %+v", got)
	}
	if got := s.TakeAcked(nil); len(got) != 0 {
		t.Fatalf("acked behind a hole: %+v", got)
	}
	rtx, ok := s.NextSegment(30) // 5 dup ACKs: fast retransmit
	if !ok || rtx.Seq != 0 || !rtx.Retransmit {
		t.Fatalf("retransmission %+v %v", rtx, ok)
	}
	acks = r.OnSegment(40, rtx, acks[:0])
	s.OnAck(50, acks[0])
	if got := r.TakeDelivered(nil); !reflect.DeepEqual(got, []Done{{1, 40}, {2, 40}}) {
		t.Fatalf("delivered %+v", got)
	}
	if got := s.TakeAcked(nil); !reflect.DeepEqual(got, []Done{{1, 50}, {2, 50}}) {
		t.Fatalf("acked %+v", got)
	}
}

// DCTCP's receiver with delayed ACKs (every 2 segments): a change of CE
// state acknowledges the segments before it at once with the old ECE, so
// marked and unmarked bytes are never reported together.
func TestDelayedAckEchoesCEExactly(t *testing.T) {
	r := NewReceiver(2, 10*units.Microsecond)
	ce := []bool{false, true, true, true, false}
	var got []Ack
	for i, c := range ce {
		got = r.OnSegment(sim.Time(i+1), Segment{Seq: units.Size(i) * 1000, Len: 1000, CE: c, SentAt: sim.Time(i + 1)}, got)
	}
	want := []Ack{
		{Ack: 1000, ECE: false, Echo: 1}, // segment 2 changes state: flush segment 1 unmarked
		{Ack: 3000, ECE: true, Echo: 3},  // segments 2–3, marked
		{Ack: 4000, ECE: true, Echo: 4},  // segment 5 changes state: flush segment 4 marked
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("acks\n got %+v\nwant %+v", got, want)
	}
	if r.NextDeadline() != 5+10*units.Microsecond {
		t.Fatalf("delayed-ACK deadline %v", r.NextDeadline())
	}
	got = r.Advance(5+10*units.Microsecond, got[:0])
	if !reflect.DeepEqual(got, []Ack{{Ack: 5000, ECE: false, Echo: 5}}) || r.NextDeadline() != NoDeadline {
		t.Fatalf("delayed ACK %+v", got)
	}
}

// Out-of-order segments (packet spraying) are kept: after the hole is
// filled the ACK covers everything, and nothing needs sending twice.
func TestReceiverKeepsOutOfOrderData(t *testing.T) {
	r := NewReceiver(1, 0)
	var acks []Ack
	for _, seq := range []units.Size{3000, 1000, 4000, 2000, 0} {
		acks = r.OnSegment(1, Segment{Seq: seq, Len: 1000}, acks)
	}
	var got []units.Size
	for _, a := range acks {
		got = append(got, a.Ack)
	}
	if !reflect.DeepEqual(got, []units.Size{0, 0, 0, 0, 5000}) || r.Counts.OutOfOrder != 4 {
		t.Fatalf("acks %v, out of order %d", got, r.Counts.OutOfOrder)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	p := DefaultParams()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	p.G = 0
	if err := p.Validate(); err == nil {
		t.Fatal("G = 0 accepted")
	}
}

// Every segment names the message holding its first byte, retransmissions
// included (the fabric's per-message diagnostics rely on it). Messages of
// 1500, 500 and 3000 B with MSS 1000: segments start at 0, 1000 (message
// 1), 2000, 3000, 4000 (message 3; message 2 is [1500, 2000)).
func TestSegmentsCarryTheMessageOfTheirFirstByte(t *testing.T) {
	s := NewSender(params(DCTCP))
	s.Submit(0, 1, 1500)
	s.Submit(0, 2, 500)
	s.Submit(0, 3, 3000)
	var got []uint64
	for _, seg := range flight(s, 0) {
		got = append(got, seg.Msg)
	}
	if !reflect.DeepEqual(got, []uint64{1, 1, 3, 3, 3}) {
		t.Fatalf("messages %v", got)
	}
	s.OnAck(1, Ack{Ack: 1000, Echo: 1})
	s.Advance(s.NextDeadline()) // go-back-N from 1000
	if seg, _ := s.NextSegment(s.NextDeadline()); seg.Seq != 1000 || seg.Msg != 1 || !seg.Retransmit {
		t.Fatalf("resend %+v", seg)
	}
}

// A connection that always has messages outstanding keeps its message
// list bounded by what is unacknowledged, and still labels segments right.
func TestLongLivedConnectionKeepsItsMessageListBounded(t *testing.T) {
	s := NewSender(params(DCTCP))
	r := NewReceiver(1, 0)
	var acks []Ack
	for i := range 10_000 {
		s.Submit(sim.Time(i), uint64(i), 500)
		r.Expect(uint64(i), 500)
		seg, ok := s.NextSegment(sim.Time(i))
		if !ok || seg.Msg != uint64(i) {
			t.Fatalf("message %d: segment %+v", i, seg)
		}
		acks = r.OnSegment(sim.Time(i), seg, acks[:0])
		s.OnAck(sim.Time(i), acks[0])
		s.Submit(sim.Time(i), 1<<40, 0) // zero-length: ignored
	}
	if len(s.msgs) > 130 || len(r.msgs) > 130 || len(r.TakeDelivered(nil)) != 10_000 {
		t.Fatalf("message lists %d and %d long", len(s.msgs), len(r.msgs))
	}
}

// NoECN is TCP that did not negotiate ECN: echoes change nothing.
func TestNoECNIgnoresEchoes(t *testing.T) {
	p := params(Reno)
	p.NoECN = true
	s := NewSender(p)
	s.Submit(0, 1, 1<<30)
	round(t, s, 0, all)
	round(t, s, ms, all)
	if s.Cwnd() != 40000 || s.Counts.ECNCuts != 0 {
		t.Fatalf("cwnd %d, cuts %d", s.Cwnd(), s.Counts.ECNCuts)
	}
}
