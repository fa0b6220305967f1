package uet

import (
	"math/rand/v2"
	"slices"
	"testing"

	"fabriclab/sim"
	"fabriclab/units"
)

// psnSet against a map over random adds, removes and drops.
func TestPSNSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s psnSet
	ref := map[int64]bool{}
	base := int64(0)
	for i := 0; i < 20000; i++ {
		psn := base + rng.Int64N(300)
		switch rng.IntN(10) {
		case 0:
			to := base + rng.Int64N(40)
			s.drop(to)
			for k := range ref {
				if k < to {
					delete(ref, k)
				}
			}
			base = to
		case 1, 2:
			if got, want := s.remove(psn), ref[psn]; got != want {
				t.Fatalf("remove(%d) = %v, want %v", psn, got, want)
			}
			delete(ref, psn)
		default:
			if got, want := s.add(psn), !ref[psn]; got != want {
				t.Fatalf("add(%d) = %v, want %v", psn, got, want)
			}
			ref[psn] = true
		}
		q := base + rng.Int64N(320)
		if s.has(q) != ref[q] {
			t.Fatalf("has(%d) = %v, want %v", q, s.has(q), ref[q])
		}
		want := q
		for ref[want] {
			want++
		}
		if got := s.firstMissing(q); got != want {
			t.Fatalf("firstMissing(%d) = %d, want %d", q, got, want)
		}
		var m uint64
		for b := int64(0); b < 64; b++ {
			if ref[q+b] {
				m |= 1 << uint(b)
			}
		}
		if got := s.bitsFrom(q); got != m {
			t.Fatalf("bitsFrom(%d) = %x, want %x", q, got, m)
		}
	}
}

func TestEntropies(t *testing.T) {
	var e entropies
	e.init(Spray, 4, 10)
	var got []uint32
	for i := 0; i < 6; i++ {
		got = append(got, e.Next())
	}
	if want := []uint32{10, 11, 12, 13, 10, 11}; !slices.Equal(got, want) {
		t.Errorf("spray: %v, want %v", got, want)
	}
	e.init(REPS, 4, 10)
	a, b := e.Next(), e.Next() // explores 10, 11
	e.Good(b)
	e.Good(a)
	if got := []uint32{e.Next(), e.Next(), e.Next()}; !slices.Equal(got, []uint32{11, 10, 12}) {
		t.Errorf("reps: %v, want the clean 11 and 10 reused, then 12 explored", got)
	}
	e.init(Single, 4, 7)
	e.Good(3)
	if e.Next() != 7 || e.Next() != 7 {
		t.Error("single: not one entropy")
	}
}

// NSCC's four quadrants and the trim, to the byte.
func TestNSCCQuadrants(t *testing.T) {
	p := &NSCCParams{TargetDelay: 4 * units.Microsecond, IncreaseGain: 1, FairIncrease: 1, DecreaseGain: 1, MaxWindow: 2}
	const base = 10 * units.Microsecond
	for _, c := range []struct {
		name string
		rtt  sim.Time
		ce   bool
		want float64
	}{
		{"no mark, below target", base + 1*units.Microsecond, false, 100000 + 4000*3.0/4},
		{"no mark, above target", base + 8*units.Microsecond, false, 100000 + 4000*4000.0/100000},
		{"mark, below target", base + 1*units.Microsecond, true, 100000},
		{"mark, above target", base + 8*units.Microsecond, true, 100000 - 4000*4.0/8},
	} {
		var n nscc
		n.init(p, 100000, 4000, base)
		n.OnAck(4000, c.rtt, c.ce)
		if n.window() != c.want {
			t.Errorf("%s: cwnd %v, want %v", c.name, n.window(), c.want)
		}
	}
	var n nscc
	n.init(p, 100000, 4000, base)
	n.OnTrim()
	if n.window() != 96000 {
		t.Errorf("trim: cwnd %v, want 96000", n.window())
	}
	for i := 0; i < 100; i++ {
		n.OnAck(100000, base, false)
	}
	if n.window() != 200000 {
		t.Errorf("cwnd %v, want the ceiling 2 BDP", n.window())
	}
	for i := 0; i < 100; i++ {
		n.OnAck(100000, base+usec(40), true)
	}
	if n.window() != 4000 {
		t.Errorf("cwnd %v, want the floor of one MTU", n.window())
	}
}

func usec(us int) sim.Time { return sim.Time(us) * units.Microsecond }

func testConfig() *Config {
	return &Config{MTU: 1000, Overhead: 0, RTO: 100 * units.Microsecond, LB: Spray, Entropies: 8, NSCCOn: true,
		NSCC: NSCCParams{TargetDelay: 4 * units.Microsecond, IncreaseGain: 1, FairIncrease: 1, DecreaseGain: 1, MaxWindow: 1.25}}
}

// A lossy, reordering loop between a sender and a receiver: every packet
// sent is delivered in a random order, trimmed at random, or lost; every
// message completes exactly once, and only missing packets are resent.
func TestSenderReceiverUnderReorderTrimAndLoss(t *testing.T) {
	cfg := testConfig()
	var s Sender
	s.Init(cfg, 100*units.Gbps, 8*units.Microsecond, 0) // BDP 100 packets
	var r Receiver
	sizes := []int64{1, 999, 1000, 1001, 64000, 250000, 3000}
	for i, b := range sizes {
		s.Post(int32(i), b)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	type inflight struct {
		d       Data
		trimmed bool
	}
	var wire []inflight
	done := map[int32]int{}
	now := sim.Time(0)
	sent := map[int64]int{}
	for step := 0; step < 100000 && s.Unacked(); step++ {
		now += 100 * units.Nanosecond
		for s.CanSend() && len(wire) < 500 {
			d := s.Next(now)
			sent[d.PSN]++
			switch x := rng.IntN(20); {
			case x == 0: // lost
			case x < 3:
				wire = append(wire, inflight{d, true})
			default:
				wire = append(wire, inflight{d, false})
			}
		}
		if len(wire) == 0 {
			if s.OnRTO(s.RTODeadline()) {
				now = s.RTODeadline()
			}
			continue
		}
		i := rng.IntN(len(wire))
		p := wire[i]
		wire = slices.Delete(wire, i, i+1)
		var ids []int32
		rp, ids := r.OnData(&p.d, p.trimmed, nil)
		for _, id := range ids {
			done[id]++
		}
		if rp.Nack {
			s.OnNack(now, rp.PSN)
		} else {
			rp.Ack.SentAt = now
			s.OnAck(now, rp.Ack)
		}
	}
	if s.Unacked() {
		t.Fatal("the sender never got everything acknowledged")
	}
	for i := range sizes {
		if done[int32(i)] != 1 {
			t.Errorf("message %d completed %d times", i, done[int32(i)])
		}
	}
	if !r.Complete() {
		t.Error("the receiver holds an incomplete message")
	}
	_, _, end := s.PSNs()
	if r.Cum() != end {
		t.Errorf("receiver at %d, want %d", r.Cum(), end)
	}
	if s.Inflight() != 0 {
		t.Errorf("%d bytes still counted in flight", s.Inflight())
	}
}

// Exactly what is missing is resent: of four packets the second arrives
// trimmed, and the third and fourth arrive before its resend.
func TestOnlyTheTrimmedPacketIsResent(t *testing.T) {
	cfg := testConfig()
	var s Sender
	s.Init(cfg, 100*units.Gbps, 8*units.Microsecond, 0)
	var r Receiver
	s.Post(7, 4000)
	var ds []Data
	for s.CanSend() {
		ds = append(ds, s.Next(0))
	}
	if len(ds) != 4 {
		t.Fatalf("%d packets, want 4", len(ds))
	}
	var done []int32
	for i, d := range ds {
		rp, got := r.OnData(&d, i == 1, nil)
		done = append(done, got...)
		if rp.Nack {
			if rp.PSN != 1 {
				t.Fatalf("NACK for %d, want 1", rp.PSN)
			}
			s.OnNack(0, rp.PSN)
			continue
		}
		s.OnAck(0, rp.Ack)
	}
	if una, _, _ := s.PSNs(); una != 1 {
		t.Errorf("una %d, want 1 (PSN 1 missing)", una)
	}
	if !s.CanSend() {
		t.Fatal("the trimmed packet is not resent")
	}
	d := s.Next(0)
	if d.PSN != 1 || !d.Retransmit {
		t.Errorf("resent PSN %d (retransmit %v), want 1", d.PSN, d.Retransmit)
	}
	if s.CanSend() {
		t.Error("more than the missing packet would be resent")
	}
	rp, got := r.OnData(&d, false, nil)
	done = append(done, got...)
	s.OnAck(0, rp.Ack)
	if !slices.Equal(done, []int32{7}) || s.Unacked() {
		t.Errorf("done %v, unacked %v; want message 7 once, nothing outstanding", done, s.Unacked())
	}
	if rp.Cum != 4 {
		t.Errorf("cumulative point %d, want 4", rp.Cum)
	}
}

// With RCCC a sender sends its unscheduled BDP, then only what credit
// allows.
func TestRCCCCredit(t *testing.T) {
	cfg := testConfig()
	cfg.NSCCOn, cfg.RCCC = false, true
	var s Sender
	s.Init(cfg, 100*units.Gbps, 8*units.Microsecond, 0) // 100 packets unscheduled
	s.Post(1, 1_000_000)
	n := 0
	for s.CanSend() {
		s.Next(0)
		n++
	}
	if n != 100 {
		t.Errorf("sent %d packets unscheduled, want 100", n)
	}
	s.OnAck(0, Ack{Cum: 1, PSN: 0, Credit: 110})
	for s.CanSend() {
		s.Next(0)
		n++
	}
	if n != 110 {
		t.Errorf("sent %d packets with credit to PSN 110, want 110", n)
	}
}

// RCCC's demand is the newest packet's: a sprayed older packet arriving
// after the last one does not make a finished sender look busy.
func TestReceiverPendingFromTheNewestPacket(t *testing.T) {
	var r Receiver
	last := Data{PSN: 1, MsgFirst: 0, MsgPackets: 2, Pending: 0}
	first := Data{PSN: 0, MsgFirst: 0, MsgPackets: 2, Pending: 1}
	r.OnData(&last, false, nil)
	r.OnData(&first, false, nil)
	if r.Pending != 0 {
		t.Errorf("pending %d after the last packet, want 0", r.Pending)
	}
}

// The first window never exceeds max_window.
func TestNSCCStartsWithinItsCeiling(t *testing.T) {
	var n nscc
	n.init(&NSCCParams{TargetDelay: 1, MaxWindow: 0.5}, 100000, 4000, 10)
	if n.window() != 50000 {
		t.Errorf("initial window %v, want the ceiling 50000", n.window())
	}
}
