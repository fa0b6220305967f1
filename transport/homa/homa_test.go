package homa

// Tests named after the claim of the paper (or of issue 6) they check.
// Expected values are exact and worked out by hand in the comments, with
// DefaultParams: MTU 1442 B, RTTBytes 9700 B → Window = 7 packets = 10094 B,
// 8 levels with one unscheduled (level 7) and seven scheduled (0–6).

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"fabriclab/sim"
	"fabriclab/units"
)

const (
	us   = units.Microsecond
	ms   = units.Millisecond
	g10  = 10 * units.Gbps
	mtu  = 1442
	win  = 10094 // Window of DefaultParams
	host = 0
)

func id(c int32, rpc uint64) MsgID { return MsgID{Client: c, RPC: rpc} }

// data is a DATA packet of message (src, rpc) of length n at offset off.
func data(src int32, rpc uint64, n, off units.Size) Packet {
	return Packet{Kind: Data, Src: src, Dst: host, ID: id(src, rpc), Length: n, Offset: off, Bytes: min(mtu, n-off)}
}

// drain returns every packet the endpoint wants to send now.
func drain(e *Endpoint, now sim.Time) []Packet {
	var out []Packet
	for {
		pk, ok := e.NextPacket(now)
		if !ok {
			return out
		}
		out = append(out, pk)
	}
}

func grant(dst int32, rpc uint64, off units.Size, prio uint8) Packet {
	return Packet{Kind: Grant, Src: host, Dst: dst, ID: id(dst, rpc), Offset: off, GrantPrio: prio, Prio: 7}
}

func wantPackets(t *testing.T, step string, got, want []Packet) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", step, got, want)
	}
}

func TestWindowIsRTTBytesInWholePackets(t *testing.T) {
	p := DefaultParams()
	if p.Window() != win || p.Unscheduled(9700) != 9700 || p.Unscheduled(1<<20) != win {
		t.Fatalf("window %d, unscheduled(9700) %d, unscheduled(1MiB) %d", p.Window(), p.Unscheduled(9700), p.Unscheduled(1<<20))
	}
	if got := RTTBytesFor(g10, 7760*units.Nanosecond); got != 9700 {
		t.Fatalf("RTTBytesFor(10G, 7.76us) = %d, want 9700", got)
	}
}

// §3.2: a message of at most RTTbytes is sent blind. 9700 B is six full
// packets (1500 B on the wire: 1.2 µs at 10G) and one of 1048 B (1106 B on
// the wire: 0.8848 µs): the last bit leaves at 8.0848 µs and arrives one
// 1 µs delay later, at 9.0848 µs. No GRANT is ever sent. The ACK (64 B,
// 51.2 ns) reaches the sender at 9.0848 + 0.0512 + 1 = 10.136 µs.
func TestMessageOfRTTBytesIsAllUnscheduledAndNeedsNoGrant(t *testing.T) {
	n := newTestNet(2, DefaultParams(), g10, us)
	m := Message{ID: id(1, 1), Dst: 0, Length: 9700}
	n.submit(1, m)
	n.run(NoDeadline - 1)
	ev, ok := n.find(Delivered, m.ID)
	if !ok || ev.At != 9_084_800 || ev.Length != 9700 || ev.Peer != 1 || !ev.Inbound {
		t.Fatalf("delivered %v %+v, want at 9.0848us", ok, ev)
	}
	if ev, ok := n.find(Acked, m.ID); !ok || ev.At != 10_136_000 {
		t.Fatalf("acked %v %+v, want at 10.136us", ok, ev)
	}
	if g := n.eps[0].Stats().Grants; g != 0 {
		t.Fatalf("%d grants for an unscheduled message", g)
	}
	for _, s := range n.sent {
		if s.pkt.Kind == Data && s.pkt.Prio != 7 {
			t.Fatalf("data packet at level %d, want the unscheduled level 7: %+v", s.pkt.Prio, s.pkt)
		}
	}
	if n.eps[0].Inbound() != 0 || n.eps[1].Outbound() != 0 || n.eps[1].NextDeadline() != NoDeadline {
		t.Fatal("state left behind after the ACK")
	}
}

// §3.3: the receiver grants one packet's worth per arriving DATA packet, to
// received + Window, and never past the message's end. A 20-packet message
// (28840 B): the first arrival (received 1442) grants to 11536; each next
// one 1442 more; the 13th arrival (received 18746) grants to 28840, the end,
// and later arrivals grant nothing.
func TestGrantsKeepRTTBytesOutstandingOnePacketPerArrival(t *testing.T) {
	e := NewEndpoint(host, DefaultParams())
	const n = 20 * mtu
	for i := range units.Size(20) {
		e.Receive(units.Duration(i)*us, data(1, 7, n, i*mtu))
		got := drain(e, units.Duration(i)*us)
		var want []Packet
		if i < 13 {
			want = []Packet{grant(1, 7, min(n, (i+1)*mtu+win), 0)}
		}
		if i == 19 {
			want = []Packet{{Kind: Ack, Src: host, Dst: 1, ID: id(1, 7), Prio: 7}}
		}
		wantPackets(t, fmt.Sprintf("arrival %d", i), got, want)
	}
	evs := e.TakeEvents(nil)
	if len(evs) != 1 || evs[0].Kind != Delivered || evs[0].At != 19*us {
		t.Fatalf("events %+v", evs)
	}
}

// §3.4–3.5: the receiver grants to the Overcommit messages with the fewest
// remaining bytes, the shortest at the higher of the levels in use, and
// stops granting to a message pushed out of that set.
func TestReceiverGrantsSRPTToAtMostKMessagesAtDistinctLevels(t *testing.T) {
	p := DefaultParams()
	p.Overcommit = 2
	e := NewEndpoint(host, p)
	A, B, C := units.Size(100*mtu), units.Size(50*mtu), units.Size(30*mtu)

	e.Receive(0, data(1, 1, A, 0))
	wantPackets(t, "A alone", drain(e, 0), []Packet{grant(1, 1, mtu+win, 0)})

	// B is shorter: it takes the higher level (1); A keeps level 0 and, its
	// target unchanged, gets no grant.
	e.Receive(1, data(2, 1, B, 0))
	wantPackets(t, "B arrives", drain(e, 1), []Packet{grant(2, 1, mtu+win, 1)})

	// C is shorter still: the active set is {C, B}; A is left out.
	e.Receive(2, data(3, 1, C, 0))
	wantPackets(t, "C arrives", drain(e, 2), []Packet{grant(3, 1, mtu+win, 1)})

	// More of A arrives: no grant for a message outside the active set.
	e.Receive(3, data(1, 1, A, mtu))
	wantPackets(t, "A outside the set", drain(e, 3), nil)

	// More of B: B is now at level 0 (C holds 1).
	e.Receive(4, data(2, 1, B, mtu))
	wantPackets(t, "B at level 0", drain(e, 4), []Packet{grant(2, 1, 2*mtu+win, 0)})
}

// §3.3: the sender transmits the message with the fewest remaining bytes
// first, at packet granularity, so a short message submitted while a long
// one is sending overtakes it; a long message stops at its unscheduled bytes
// until granted and then uses the level of the grant.
func TestSenderSendsShortestRemainingFirst(t *testing.T) {
	e := NewEndpoint(host, DefaultParams())
	L := Message{ID: id(0, 1), Dst: 1, Length: 100_000}
	S := Message{ID: id(0, 2), Dst: 2, Length: 3000}
	if err := e.Submit(0, L); err != nil {
		t.Fatal(err)
	}
	first, _ := e.NextPacket(0)
	if first.ID != L.ID || first.Offset != 0 {
		t.Fatalf("first packet %+v", first)
	}
	if err := e.Submit(1, S); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, pk := range drain(e, 2) {
		order = append(order, fmt.Sprintf("%d@%d/%d", pk.ID.RPC, pk.Offset, pk.Prio))
	}
	want := []string{"2@0/7", "2@1442/7", "2@2884/7", // S: 1442+1442+116
		"1@1442/7", "1@2884/7", "1@4326/7", "1@5768/7", "1@7210/7", "1@8652/7"} // rest of L's 7 unscheduled packets
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("order %v\nwant  %v", order, want)
	}
	if e.HasPacket() {
		t.Fatal("L sent past its unscheduled bytes without a grant")
	}
	e.Receive(3, Packet{Kind: Grant, Src: 1, Dst: host, ID: L.ID, Offset: win + mtu, GrantPrio: 3})
	pk, ok := e.NextPacket(3)
	if !ok || pk.Offset != win || pk.Bytes != mtu || pk.Prio != 3 || pk.Retransmit {
		t.Fatalf("after the grant: %+v", pk)
	}
	if e.HasPacket() {
		t.Fatal("sent past the granted offset")
	}
}

// §3.4: unscheduled levels split the workload's unscheduled bytes evenly.
// CDF: 1000 B w.p. 1/2, 2000 B 1/4, 4000 B 1/8, 100000 B 1/8; RTTbytes
// 10000. Unscheduled bytes per size: 500, 500, 500, 1250 (total 2750,
// cumulative 500, 1000, 1500, 2750). All bytes: 14000, so the unscheduled
// share is 2750/14000 and 8 levels give round(1.571) = 2 unscheduled levels.
func TestUnscheduledCutoffsCarryEqualBytes(t *testing.T) {
	cdf := []CDFPoint{{1000, 0.5}, {2000, 0.75}, {4000, 0.875}, {100000, 1}}
	for _, c := range []struct {
		levels int
		want   []units.Size
	}{
		{1, []units.Size{100000}},
		{2, []units.Size{4000, 100000}},                       // half = 1375: reached at 4000
		{3, []units.Size{2000, 100000, 100000}},               // 916.7 → 2000, 1833.3 → 100000
		{4, []units.Size{2000, 4000, 100000, 100000}},         // 687.5, 1375, 2062.5
		{5, []units.Size{2000, 4000, 100000, 100000, 100000}}, // 550, 1100, 1650, 2200
	} {
		got, err := UnscheduledCutoffs(cdf, 10000, c.levels)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%d levels: %v %v, want %v", c.levels, got, err, c.want)
		}
	}
	f, _ := UnschedFraction(cdf, 10000)
	if f != 2750.0/14000 {
		t.Fatalf("unscheduled share %v", f)
	}
	p := DefaultParams()
	p.MTU, p.RTTBytes = 1000, 10000
	p, err := p.WithWorkload(cdf)
	if err != nil {
		t.Fatal(err)
	}
	if p.UnschedPrios != 2 || p.Overcommit != 6 || !reflect.DeepEqual(p.UnschedCutoffs, []units.Size{4000, 100000}) {
		t.Fatalf("workload params: %d unscheduled levels, k %d, cutoffs %v", p.UnschedPrios, p.Overcommit, p.UnschedCutoffs)
	}
	for _, c := range []struct {
		n    units.Size
		want uint8
	}{{1, 7}, {4000, 7}, {4001, 6}, {100000, 6}, {1 << 30, 6}} {
		if got := p.UnschedPrio(c.n); got != c.want {
			t.Errorf("UnschedPrio(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	if _, err := UnscheduledCutoffs([]CDFPoint{{10, 0.5}}, 1, 1); err == nil {
		t.Error("a CDF that does not reach 1 was accepted")
	}
}

// §3.7: a lost scheduled packet is asked for again and the message then
// completes. The sender keeps sending (grants follow received + Window), so
// it finishes first; ResendTimeout after its last word it PROBEs, and the
// receiver, told that everything below the sender's offset was sent, asks at
// once for the missing packet (the PROBE takes 1.0512 µs). The RESEND
// (1.0512 µs) and the retransmission (1.2 µs + 1 µs) then complete the
// message 3.2512 µs after the RESEND. (The receiver's own timeout path is
// checked in TestMessageAbandonedAfterMaxResends.)
func TestResendAfterLossRecoversTheMissingPacket(t *testing.T) {
	p := DefaultParams()
	n := newTestNet(2, p, g10, us)
	m := Message{ID: id(1, 1), Dst: 0, Length: 20 * mtu}
	n.drop = func(pk Packet) bool { return pk.Kind == Data && pk.Offset == 2*mtu && !pk.Retransmit }
	n.submit(1, m)
	n.run(NoDeadline - 1)

	var quiet, probeAt, resendAt sim.Time // sender's last word before the probe
	var resends []Packet
	for _, s := range n.sent {
		switch {
		case probeAt == 0 && s.pkt.Kind == Data:
			quiet = max(quiet, s.at)
		case probeAt == 0 && s.pkt.Kind == Grant:
			quiet = max(quiet, s.at+units.SerializationTime(ctrlWire, g10)+us)
		case s.pkt.Kind == Probe:
			probeAt = s.at
		case s.pkt.Kind == Resend:
			resends = append(resends, s.pkt)
			resendAt = s.at
		}
	}
	if probeAt != quiet+p.ResendTimeout {
		t.Fatalf("PROBE at %v, want %v + timeout", probeAt, quiet)
	}
	want := []Packet{{Kind: Resend, Src: 0, Dst: 1, ID: m.ID, Offset: 2 * mtu, Bytes: mtu, Prio: 7, GrantPrio: 7}}
	wantPackets(t, "resends", resends, want)
	if resendAt != probeAt+1_051_200 {
		t.Fatalf("RESEND at %v, want the PROBE's arrival %v", resendAt, probeAt+1_051_200)
	}
	ev, ok := n.find(Delivered, m.ID)
	if !ok || ev.At != resendAt+3_251_200 {
		t.Fatalf("delivered %v at %v, want %v", ok, ev.At, resendAt+3_251_200)
	}
	if st := n.eps[1].Stats(); st.Retransmits != 1 || st.Busies != 0 || st.Probes != 1 {
		t.Fatalf("sender stats %+v", st)
	}
}

// §3.7: a RESEND for bytes the sender has not sent yet (it is busy with
// shorter messages) is answered with BUSY, which resets the receiver's
// timeout count; for bytes already sent it queues a retransmission.
func TestResendForUnsentBytesIsAnsweredBusy(t *testing.T) {
	e := NewEndpoint(host, DefaultParams())
	m := Message{ID: id(0, 1), Dst: 1, Length: 50 * mtu}
	if err := e.Submit(0, m); err != nil {
		t.Fatal(err)
	}
	e.NextPacket(0) // offset 0 only
	e.Receive(1, Packet{Kind: Resend, Src: 1, Dst: host, ID: m.ID, Offset: 3 * mtu, Bytes: mtu, GrantPrio: 2})
	pk, _ := e.NextPacket(1)
	wantPackets(t, "busy", []Packet{pk}, []Packet{{Kind: Busy, Src: host, Dst: 1, ID: m.ID, Prio: 7}})
	e.Receive(2, Packet{Kind: Resend, Src: 1, Dst: host, ID: m.ID, Offset: 0, Bytes: mtu, GrantPrio: 2})
	pk, _ = e.NextPacket(2)
	if pk.Kind != Data || pk.Offset != 0 || !pk.Retransmit || pk.Prio != 7 {
		t.Fatalf("retransmission %+v", pk)
	}

	// Receiver side: BUSY resets the count, so abandonment moves out.
	r := NewEndpoint(host, DefaultParams())
	r.Receive(0, data(1, 1, 50*mtu, 0))
	drain(r, 0)
	r.Advance(1 * ms)
	if st := r.Stats(); st.Resends != 1 {
		t.Fatalf("resends %d", st.Resends)
	}
	r.Receive(1*ms+5, Packet{Kind: Busy, Src: 1, Dst: host, ID: id(1, 1)})
	if d := r.NextDeadline(); d != 2*ms+5 {
		t.Fatalf("deadline after BUSY %v", d)
	}
	if r.in[0].timeouts != 0 {
		t.Fatal("BUSY did not reset the timeout count")
	}
}

// §3.7: after MaxResends unanswered RESENDs the receiver abandons the
// message. One packet arrived at 0; RESENDs at 1…5 ms ask for the rest of
// the granted range [1442, 11536); at 6 ms the message is abandoned.
func TestMessageAbandonedAfterMaxResends(t *testing.T) {
	p := DefaultParams()
	e := NewEndpoint(host, p)
	e.Receive(0, data(1, 1, 20*mtu, 0))
	drain(e, 0)
	for i := 1; i <= p.MaxResends; i++ {
		now := units.Duration(i) * ms
		if d := e.NextDeadline(); d != now {
			t.Fatalf("timeout %d: deadline %v, want %v", i, d, now)
		}
		e.Advance(now)
		want := []Packet{{Kind: Resend, Src: host, Dst: 1, ID: id(1, 1), Offset: mtu, Bytes: win, Prio: 7, GrantPrio: 7}}
		wantPackets(t, fmt.Sprintf("timeout %d", i), drain(e, now), want)
	}
	e.Advance(6*ms - 1)
	if len(e.TakeEvents(nil)) != 0 {
		t.Fatal("abandoned early")
	}
	e.Advance(6 * ms)
	evs := e.TakeEvents(nil)
	want := []Event{{Kind: Abandoned, ID: id(1, 1), Peer: 1, Length: 20 * mtu, At: 6 * ms, Inbound: true}}
	if !reflect.DeepEqual(evs, want) || e.Inbound() != 0 || e.NextDeadline() != NoDeadline {
		t.Fatalf("events %+v, inbound %d", evs, e.Inbound())
	}
}

// When every unscheduled packet is lost the receiver never learns of the
// message; the sender's PROBE after ResendTimeout gets a RESEND of the whole
// unscheduled part and the message completes. 3000 B: the last packet
// starts at 2.4 µs, so the PROBE goes at 1002.4 µs; PROBE and RESEND each
// take 1.0512 µs; the three packets take 2.5392 µs + 1 µs:
// 1002.4 + 2·1.0512 + 3.5392 = 1008.0416 µs.
func TestProbeRestartsAMessageTheReceiverNeverSaw(t *testing.T) {
	n := newTestNet(2, DefaultParams(), g10, us)
	m := Message{ID: id(1, 1), Dst: 0, Length: 3000}
	n.drop = func(pk Packet) bool { return pk.Kind == Data && !pk.Retransmit }
	n.submit(1, m)
	n.run(NoDeadline - 1)
	ev, ok := n.find(Delivered, m.ID)
	if !ok || ev.At != 1_008_041_600 {
		t.Fatalf("delivered %v %+v", ok, ev)
	}
	if _, ok := n.find(Acked, m.ID); !ok {
		t.Fatal("not acked")
	}
	if st := n.eps[1].Stats(); st.Probes != 1 || st.Retransmits != 3 {
		t.Fatalf("sender stats %+v", st)
	}
}

// A lost ACK: the sender probes, the receiver remembers the message and
// ACKs again; nothing is delivered twice.
func TestLostAckIsRepairedWithoutASecondDelivery(t *testing.T) {
	n := newTestNet(2, DefaultParams(), g10, us)
	m := Message{ID: id(1, 1), Dst: 0, Length: 3000}
	lost := false
	n.drop = func(pk Packet) bool {
		if pk.Kind == Ack && !lost {
			lost = true
			return true
		}
		return false
	}
	n.submit(1, m)
	n.run(NoDeadline - 1)
	delivered, acked := 0, 0
	for _, ev := range n.events {
		switch ev.Kind {
		case Delivered:
			delivered++
		case Acked:
			acked++
		}
	}
	if delivered != 1 || acked != 1 || n.eps[0].Stats().Acks != 2 {
		t.Fatalf("delivered %d acked %d acks sent %d", delivered, acked, n.eps[0].Stats().Acks)
	}
}

// randomMix runs senders 1..hosts-1 sending seeded random messages to host
// 0 and returns the network after all is delivered. check, if set, runs
// after every packet host 0 receives.
func randomMix(t *testing.T, p Params, seed uint64, hosts, msgs int, check func(n *testNet)) *testNet {
	t.Helper()
	n := newTestNet(hosts, p, g10, us)
	if check != nil {
		n.afterReceive = func(h int32, _ Packet) {
			if h == 0 {
				check(n)
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	type sub struct {
		at  sim.Time
		src int32
		m   Message
	}
	var subs []sub
	for i := range msgs {
		src := int32(1 + rng.IntN(hosts-1))
		length := units.Size(1 + rng.IntN(60*mtu))
		subs = append(subs, sub{sim.Time(rng.IntN(200)) * us, src, Message{ID: id(src, uint64(i)), Dst: 0, Length: length}})
	}
	// submit in time order through the harness's own clock
	for len(subs) > 0 {
		next := 0
		for i := range subs {
			if subs[i].at < subs[next].at {
				next = i
			}
		}
		s := subs[next]
		subs = append(subs[:next], subs[next+1:]...)
		n.run(s.at)
		n.now = s.at
		n.submit(s.src, s.m)
	}
	n.run(NoDeadline - 1)
	return n
}

// §3.5: grants never exceed the overcommitment bound. After every packet the
// receiver handles, the messages whose granted offset rose (and that still
// need more grants) are at most k and all among the k not fully granted
// messages with the fewest remaining bytes; no message has more than Window
// granted and not received; the active messages have distinct levels.
func TestGrantsNeverExceedTheOvercommitmentBound(t *testing.T) {
	for _, k := range []int{1, 3, 7} {
		p := DefaultParams()
		p.Overcommit = k
		prev := map[MsgID]units.Size{}
		checks := 0
		check := func(n *testNet) {
			e := n.eps[0]
			// candidates: not fully granted after the step
			var cand []*inMsg
			for _, m := range e.in {
				if m.granted < m.length {
					cand = append(cand, m)
				}
			}
			// reference ranking: fewest remaining, then first seen
			for i := range cand {
				for j := i + 1; j < len(cand); j++ {
					a, b := cand[i], cand[j]
					if b.remaining() < a.remaining() || b.remaining() == a.remaining() && b.seq < a.seq {
						cand[i], cand[j] = b, a
					}
				}
			}
			top := cand[:min(k, len(cand))]
			raised := 0
			for _, m := range e.in {
				g, ok := prev[m.id]
				if !ok {
					g = p.Unscheduled(m.length)
				}
				if m.granted > g && m.granted < m.length {
					raised++
					if !contains(top, m) {
						t.Fatalf("k=%d at %v: grant to %v (rem %d, granted %d→%d) outside the top %d: %v", k, n.now, m.id, m.remaining(), g, m.granted, k, dump(top))
					}
				}
				if m.granted-m.received > p.Window() {
					t.Fatalf("k=%d: %v has %d granted and not received", k, m.id, m.granted-m.received)
				}
				prev[m.id] = m.granted
			}
			if raised > k {
				t.Fatalf("k=%d: %d messages granted at once", k, raised)
			}
			seen := map[uint8]bool{}
			for _, m := range e.pickActive() {
				if seen[m.prio] {
					t.Fatalf("k=%d: two active messages at level %d", k, m.prio)
				}
				seen[m.prio] = true
			}
			checks++
		}
		n := randomMix(t, p, 42, 17, 200, check)
		if st := n.eps[0].Stats(); st.Delivered != 200 || st.Resends != 0 {
			t.Fatalf("k=%d: delivered %d of 200, resends %d", k, st.Delivered, st.Resends)
		}
		if checks == 0 {
			t.Fatal("no checks ran")
		}
	}
}

// Same seed, same bytes: two runs produce identical event logs.
func TestSameSeedSameEvents(t *testing.T) {
	a := randomMix(t, DefaultParams(), 7, 9, 100, nil)
	b := randomMix(t, DefaultParams(), 7, 9, 100, nil)
	if !reflect.DeepEqual(a.events, b.events) || len(a.events) != 200 {
		t.Fatalf("runs differ or incomplete: %d vs %d events", len(a.events), len(b.events))
	}
}

// Issue 6: no message starves under a seeded adversarial mix. Host 1 sends
// one long message (200 packets) to host 0; hosts 2..15 each keep a shorter
// message (30 packets) in flight to host 0 at all times, starting a new one
// as soon as the previous is acknowledged, so SRPT always has more than
// k = 7 shorter messages to grant to. With pure SRPT the long message never gets past the
// one grant its first packet earned while it was alone (to 11536 B); with 5 % of grants reserved for the oldest message it
// completes, in bounded time.
func TestNoStarvationWithFIFOGrants(t *testing.T) {
	run := func(permille int) (*testNet, MsgID) {
		p := DefaultParams()
		p.FIFOGrantPermille = permille
		n := newTestNet(16, p, g10, us)
		long := id(1, 0)
		var rpc uint64
		n.onEvent = func(h int32, ev Event) {
			if ev.Kind == Acked && h >= 2 {
				rpc++
				n.submit(h, Message{ID: id(h, rpc), Dst: 0, Length: 30 * mtu})
			}
		}
		n.submit(1, Message{ID: long, Dst: 0, Length: 200 * mtu})
		for h := int32(2); h <= 15; h++ {
			rpc++
			n.submit(h, Message{ID: id(h, rpc), Dst: 0, Length: 30 * mtu})
		}
		n.run(5 * ms)
		return n, long
	}
	n, long := run(0)
	if _, ok := n.find(Delivered, long); ok {
		t.Fatal("pure SRPT delivered the long message: the mix is not adversarial")
	}
	m := n.eps[0].ins[long]
	if m == nil || m.received != mtu+win || m.granted != mtu+win {
		t.Fatalf("pure SRPT: long message state %+v, want stuck at the one grant it got while alone (11536)", m)
	}
	n, long = run(50)
	ev, ok := n.find(Delivered, long)
	if !ok {
		t.Fatalf("with FIFO grants the long message still starved (received %d)", n.eps[0].ins[long].received)
	}
	if ev.At > 1*ms {
		t.Fatalf("long message took %v", ev.At)
	}
	t.Logf("long message delivered at %v with %d FIFO grants", ev.At, n.eps[0].Stats().FIFOGrants)
}

func TestParamsValidateNamesTheField(t *testing.T) {
	p := DefaultParams()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	p.UnschedPrios = 8
	if err := p.Validate(); err == nil {
		t.Fatal("UnschedPrios = Priorities accepted")
	}
	e := NewEndpoint(0, DefaultParams())
	if err := e.Submit(0, Message{ID: id(0, 1), Dst: 0, Length: 10}); err == nil {
		t.Fatal("message to itself accepted")
	}
	if err := e.Submit(0, Message{ID: id(0, 1), Dst: 1, Length: 0}); err == nil {
		t.Fatal("empty message accepted")
	}
}

func dump(ms []*inMsg) string {
	s := ""
	for _, m := range ms {
		s += fmt.Sprintf(" %v rem %d granted %d;", m.id, m.remaining(), m.granted)
	}
	return s
}
