package roce

// Fabric tests of the NIC adapter, on the fabrictest rig (which checks
// bytes, packets and single delivery after every run). The fabric: host —
// leaf — host at 400G, 1 µs links, PFC on priority 3; MTU 4096 B + 82 B
// overhead = 4178 B on the wire (83.56 ns at 400G).

import (
	"fmt"
	"reflect"
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/metrics"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
)

var link400 = topo.Link{Rate: 400 * units.Gbps, Delay: units.Microsecond}

func nicConfig(dq DCQCNParams) Config {
	return Config{MTU: 4096, Overhead: 82, AckEvery: 1, RTO: units.Millisecond, DataPrio: 3, CtrlPrio: 6, DCQCN: dq}
}

// rig builds hosts on one leaf (lossless priority 3, 32 MiB buffer) with
// RoCE on every host; Send uses one QP per host pair.
func rig(t testing.TB, hosts int, cfg Config) (*fabrictest.Rig, *Transport) {
	t.Helper()
	sw := &fabric.SwitchConfig{Buffer: 32 << 20, XOFF: 512 << 10, XON: 504 << 10, MaxPacketWire: 4178}
	sw.Lossless[3] = true
	return rigOn(t, hosts, sw, cfg)
}

// rigOn builds hosts on one leaf of switch configuration sw, with RoCE
// (cfg) on every host and one QP per host pair.
func rigOn(t testing.TB, hosts int, sw *fabric.SwitchConfig, cfg Config) (*fabrictest.Rig, *Transport) {
	t.Helper()
	r := fabrictest.New(t, 1, fabrictest.LeafSpine(hosts, hosts, 1, link400, link400, sw))
	tr := New(r.Net, cfg)
	fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
	return r, tr
}

// A QP cut to the minimum rate waits ~33 ms for its next 4 KB packet at
// 1 Mb/s. When DCQCN raises the rate meanwhile, the wait must shrink with
// it (a token bucket), not run out at the old rate.
func TestRateIncreaseShortensTheWaitOfAPacedQP(t *testing.T) {
	dq, _ := Preset("tuned-final")
	r, tr := rig(t, 2, nicConfig(dq))
	qp := tr.Connect(0, 1)
	rp := tr.Sender(qp).ReactionPoint()
	// Drive the rate to the floor before anything is sent.
	for i := 0; i < 40; i++ {
		rp.OnCNP(units.Duration(i) * 4 * units.Microsecond)
	}
	if rp.Rate() > 2*units.Mbps {
		t.Fatalf("rate %v after 40 CNPs", rp.Rate())
	}
	r.Sched.Run(160 * units.Microsecond) // let the clock catch up with the CNPs
	r.Expect(0, 64*1024)
	tr.Post(qp, 0, 64*1024)
	r.Run(-1)
	// At 1 Mb/s the 16 packets would take 16 × 33 ms; tuned-final is back
	// near line rate within tens of microseconds.
	if at := r.Delivered[0]; at > 2*units.Millisecond {
		t.Fatalf("64 KiB delivered at %v: the rate increase did not shorten the pacing wait", at)
	}
}

// Go-back-N: a NACK for PSN 1 (sent by host 1 at 200 ns, 84 B: it reaches
// host 0 at 200 + 2 × (1.68 + 1000) = 2203.36 ns) rewinds the sender, whose
// packets started every 83.56 ns: PSNs 0…26 were out (the 27th started at
// 2172.56 ns), so 1…26 are sent again and counted as retransmissions. The
// receiver acknowledges the duplicates and nothing else is lost.
func TestNackRewindsAndCountsRetransmits(t *testing.T) {
	dq, _ := Preset("off")
	r, tr := rig(t, 2, nicConfig(dq))
	r.Send(0, 1, 0, 40*4096)
	qp := QP{Src: 0, Dst: 1} // the rig's first QP
	r.Do(200*units.Nanosecond, func() {
		_, _, sqp, dqp := tr.Tuple(qp)
		p := r.Net.Pool.Get()
		p.Kind, p.Prio, p.Wire = fabric.Nack, 6, DefaultControlWire
		p.Src, p.Dst, p.SrcQP, p.DstQP, p.PSN = 1, 0, dqp, sqp, 1
		r.Net.HostPorts[1].Enqueue(p)
	})
	r.Run(-1)
	c := tr.NICs[0].C
	if c.NACKs != 1 || c.Retransmits != 26 || c.Timeouts != 0 {
		t.Fatalf("sender counters %+v, want 1 NACK and 26 retransmits", c)
	}
	if tr.Counters().Retransmits != 26 {
		t.Fatal("counters lost the retransmits")
	}
}

// A message posted on a QP whose previous message is fully sent but not
// yet acknowledged starts with a packet of its own: a one-packet message
// then carries its own id, payload and end mark, and is delivered (it used
// to be sent as the old message's and never completed).
func TestMessagePostedBehindAnUnackedOneIsDelivered(t *testing.T) {
	r, tr := rig(t, 2, nicConfig(DCQCNParams{}))
	r.Send(0, 1, 1, 3*4096)
	// 3 packets take ~0.25 us to send; the first ACK needs ~4 us to return.
	r.SendAt(units.Microsecond, 0, 1, 2, 100)
	r.SendAt(2*units.Microsecond, 0, 1, 3, 5000)
	r.Run(-1)
	if c := tr.NICs[0].C; c.Retransmits != 0 {
		t.Errorf("%d retransmits", c.Retransmits)
	}
}

// Lossy fabric: 6 senders into one receiver through a 200 kB buffer without
// PFC drop packets (mostly whole tails: senders at one rate lock in phase
// with the receiver's link, so one of them wins every freed slot). In
// go-back-N a gap the receiver sees draws a NACK; with out-of-order
// acceptance it holds what arrives beyond a gap and sends no NACK. Either
// way the timeout (100 µs) repairs the tails, and every message completes.
func TestLossIsRepaired(t *testing.T) {
	for _, accept := range []bool{false, true} {
		cfg := nicConfig(DCQCNParams{})
		cfg.AcceptOutOfOrder = accept
		cfg.RTO = 100 * units.Microsecond
		sw := &fabric.SwitchConfig{Buffer: 200_000, MaxPacketWire: 4178}
		r := fabrictest.New(t, 1, fabrictest.LeafSpine(7, 7, 1, link400, link400, sw))
		tr := New(r.Net, cfg)
		fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
		for s := 1; s <= 6; s++ {
			r.SendAt(sim.Time(s)*37*units.Nanosecond, s, 0, int32(s), 1<<20)
		}
		r.Run(-1)
		c := tr.Counters()
		t.Logf("accept %v: drops %d, %+v", accept, r.Net.DroppedPackets, c)
		if r.Net.DroppedPackets == 0 || c.Retransmits == 0 || c.OutOfOrder == 0 {
			t.Fatalf("accept %v: drops %d, counters %+v: the test lost its point", accept, r.Net.DroppedPackets, c)
		}
		if accept && (c.NACKs != 0 || c.Timeouts == 0 || c.ReorderMaxPackets == 0) {
			t.Fatalf("out-of-order receiver: %+v", c)
		}
		if !accept && c.NACKs == 0 {
			t.Fatalf("go-back-N receiver sent no NACK: %+v", c)
		}
	}
}

// incast is a 4→1 incast of bytes per sender over RoCE with tuned-final
// DCQCN through a PFC- and ECN-enabled leaf.
func incast(t *testing.T, bytes int64) (*fabrictest.Rig, *Transport, DCQCNParams) {
	t.Helper()
	dq, _ := Preset("tuned-final")
	sw := &fabric.SwitchConfig{Buffer: 32 << 20, XOFF: 512 << 10, XON: 504 << 10, MaxPacketWire: 4178,
		ECN: true, KMin: 20_000, KMax: 200_000, PMax: 0.2}
	sw.Lossless[3] = true
	r := fabrictest.New(t, 1, fabrictest.LeafSpine(5, 5, 1, link400, link400, sw))
	tr := New(r.Net, nicConfig(dq))
	fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
	for s := 1; s <= 4; s++ {
		r.Send(s, 0, int32(s), bytes)
	}
	return r, tr, dq
}

// DCQCN on the fabric: a 4→1 incast through an ECN-marking switch draws
// CNPs, at most one per QP per CNPInterval (4 µs in tuned-final), the
// senders' rates drop below line rate, and every message completes.
func TestIncastDrawsPacedCNPs(t *testing.T) {
	r, tr, dq := incast(t, 4<<20)
	r.Run(50 * units.Microsecond)
	slow := 0
	for _, rate := range tr.SenderRates() {
		if rate < 400*units.Gbps {
			slow++
		}
	}
	r.Run(-1)
	var end sim.Time // the last data packet's arrival
	for _, at := range r.Delivered {
		end = max(end, at)
	}
	cnps := tr.NICs[0].C.CNPs
	t.Logf("done at %v: %d CNPs, %d of 4 QPs below line rate at 50 µs", end, cnps, slow)
	if cnps == 0 || slow == 0 {
		t.Fatalf("%d CNPs, %d QPs slowed", cnps, slow)
	}
	if most := 4 * int64(end/dq.CNPInterval+1); cnps > most {
		t.Fatalf("%d CNPs in %v: more than one per QP per %v", cnps, end, dq.CNPInterval)
	}
}

// With the notification on the ACK no CNP frame crosses the fabric, the
// senders slow down all the same, and the ACKs are control_wire bytes.
func TestCNPOnAckSendsNoCNPFrames(t *testing.T) {
	dq, _ := Preset("tuned-final")
	for _, onAck := range []bool{false, true} {
		sw := &fabric.SwitchConfig{Buffer: 32 << 20, XOFF: 512 << 10, XON: 504 << 10, MaxPacketWire: 4178,
			ECN: true, KMin: 20_000, KMax: 200_000, PMax: 0.2}
		sw.Lossless[3] = true
		r := fabrictest.New(t, 1, fabrictest.LeafSpine(5, 5, 1, link400, link400, sw))
		cfg := nicConfig(dq)
		cfg.CNPOnAck, cfg.ControlWire = onAck, 64
		tr := New(r.Net, cfg)
		fabrictest.Attach(r, &tr.Shell, fabrictest.PerPair(tr.Connect, tr.Post))
		frames := map[fabric.Kind]int{}
		wires := map[int32]bool{}
		for s := 1; s <= 4; s++ {
			r.Net.SetHost(s, &kindCounter{tr.NICs[s], frames, wires}, tr.NICs[s])
		}
		for s := 1; s <= 4; s++ {
			r.Send(s, 0, int32(s), 4<<20)
		}
		r.Run(50 * units.Microsecond)
		slow := 0
		for _, rate := range tr.SenderRates() {
			if rate < 400*units.Gbps {
				slow++
			}
		}
		r.Run(-1)
		notes := tr.NICs[0].C.CNPs
		if notes == 0 || slow == 0 {
			t.Fatalf("on ACK %v: %d notifications, %d QPs slowed", onAck, notes, slow)
		}
		if got := frames[fabric.CNP]; (got == 0) == !onAck || onAck && got != 0 {
			t.Errorf("on ACK %v: %d CNP frames reached the senders (%d notifications)", onAck, got, notes)
		}
		if !onAck && int64(frames[fabric.CNP]) != notes {
			t.Errorf("%d CNP frames for %d notifications", frames[fabric.CNP], notes)
		}
		if len(wires) != 1 || !wires[64] {
			t.Errorf("on ACK %v: control frames of %v bytes, want 64", onAck, wires)
		}
	}
}

// The per-packet path allocates nothing: a 4→1 incast with DCQCN (CNPs,
// rate changes, pacing, ACKs) runs 10 µs slices without an allocation.
func TestSteadyIncastDoesNotAllocate(t *testing.T) {
	r, _, _ := incast(t, 1<<40)
	r.Run(100 * units.Microsecond)
	before := r.Net.DeliveredPackets
	allocs := testing.AllocsPerRun(20, func() { r.Sched.Run(r.Sched.Now() + 10*units.Microsecond) })
	if pk := r.Net.DeliveredPackets - before; pk < 20*100 {
		t.Fatalf("only %d packets in the measured runs", pk)
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per 10 µs", allocs)
	}
	r.Check()
}

// Run leaves nothing behind: the rig's invariants hold mid-run too (packets
// queued at hosts, on wires and in the switch).
func TestInvariantsHoldMidRun(t *testing.T) {
	r, _ := rig(t, 4, nicConfig(DCQCNParams{}))
	for s := 1; s <= 3; s++ {
		r.Send(s, 0, int32(s), 1<<20)
		r.Send(0, s, int32(10+s), 1<<20)
	}
	for at := sim.Time(0); at < 30*units.Microsecond; at += 777 * units.Nanosecond {
		r.Run(at)
	}
	r.Run(-1)
}

// kindCounter counts the frames reaching a NIC by kind (and control
// frames' sizes), then hands them on.
type kindCounter struct {
	*NIC
	frames map[fabric.Kind]int
	wires  map[int32]bool
}

func (k *kindCounter) Receive(p *fabric.Packet, in *fabric.Port) {
	k.frames[p.Kind]++
	if p.Kind != fabric.Data {
		k.wires[p.Wire] = true
	}
	k.NIC.Receive(p, in)
}

// Send slots (Config.ActiveQPs): host 0 posts 8 packets to host 1 on QP a,
// held at 100 Gb/s by its rate limiter (a packet may start 334.24 ns after
// the one before), then 8 to host 2 on QP b at line rate (83.56 ns a
// packet). a's first packet starts at 0, before b is posted. A packet's
// last bit reaches its receiver 83.56 + 1000 + 83.56 + 1000 = 2167.12 ns
// after it starts.
//
//   - No slots (and two slots, which serve both QPs at once): the NIC fills
//     a's waits with b. b sends from 83.56 ns in the free packet times and
//     a loses one to b whenever b was ahead in the round-robin, so b's last
//     packet starts at 752.04 (delivered 2919.16) and a's at 0, 417.8,
//     835.6 and then every 334.24, the last at 2506.8 (delivered 4673.92).
//   - One slot, bursts of one packet: a keeps the slot (nobody waits for it
//     yet) and idles in it until 334.24; from then on the slot alternates,
//     a at k × 334.24 and b 83.56 ns after each, so the NIC runs at the
//     paced QP's rate: a's last at 2339.68 (delivered 4506.8), b's last
//     right after it at 2506.8 (delivered 4673.92).
//   - One slot, bursts of 4: a sends 4 packets, at 0, 334.24, 668.48 and
//     1002.72, b 4 back to back from 1086.28, a 4 from 1420.52 (its
//     wait ended during b's turn) every 334.24, the last at 2423.24
//     (delivered 4590.36), b its last 4 from 2506.8, the last at 2757.48
//     (delivered 4924.6).
func TestActiveQPsKeepARateLimitedQPsSlot(t *testing.T) {
	cases := []struct {
		slots, burst int
		a, b         sim.Time // deliveries in picoseconds
	}{
		{0, 1, 4673920, 2919160},
		{2, 1, 4673920, 2919160},
		{1, 1, 4506800, 4673920},
		{1, 4, 4590360, 4924600},
	}
	for _, c := range cases {
		dq, _ := Preset("default")
		dq.RateOnFirstCNP = 100 * units.Gbps
		dq.IncreaseInterval = units.Second // no increase within the test
		dq.ByteCounter = 0
		cfg := nicConfig(dq)
		cfg.ActiveQPs, cfg.Burst = c.slots, c.burst
		r, tr := rig(t, 3, cfg)
		a, b := tr.Connect(0, 1), tr.Connect(0, 2)
		tr.Sender(a).ReactionPoint().OnCNP(0)
		if got := tr.Sender(a).Rate(); got != 100*units.Gbps {
			t.Fatalf("a's rate %v after its first CNP", got)
		}
		r.Expect(1, 8*4096)
		r.Expect(2, 8*4096)
		tr.Post(a, 1, 8*4096)
		tr.Post(b, 2, 8*4096)
		r.Run(-1)
		wantA, wantB := c.a, c.b
		if da, db := r.Delivered[1], r.Delivered[2]; da != wantA || db != wantB {
			t.Errorf("%d slots, bursts of %d: a delivered at %v, b at %v; want %v and %v", c.slots, c.burst, da, db, wantA, wantB)
		}
		if n := tr.NICs[0]; n.slots != 0 || n.slotWait.Len() != 0 {
			t.Errorf("%d slots, bursts of %d: %d slots held and %d QPs waiting at the end", c.slots, c.burst, n.slots, n.slotWait.Len())
		}
	}
}

// Switch ports reserve the end of a frame with nothing queued behind it
// instead of scheduling it (fabric.Port), as host ports do when their NIC
// is idle (Feeder.Idle), and schedule the reservations
// when the scheduler renumbers its insertion numbers. A run that
// renumbers every few insertions is the same run: the same
// deliveries at the same times, the same counters (only a few more
// events: the reservations scheduled).
func TestRenumberingChangesNothing(t *testing.T) {
	type outcome struct {
		delivered map[int32]sim.Time
		order     []int32
		counters  metrics.Counters
		ports     []string
	}
	var events []uint64
	run := func(every uint64) outcome {
		r, tr, _ := incast(t, 1<<19)
		if every > 0 {
			r.Sched.RenumberAfter(every)
		}
		r.Run(-1)
		events = append(events, r.Sched.Executed)
		o := outcome{r.Delivered, r.Order, tr.Counters(), nil}
		for _, pt := range r.Net.Ports {
			o.ports = append(o.ports, fmt.Sprintf("%+v", pt.Counters(r.Sched.Now())))
		}
		return o
	}
	want := run(0)
	if events[0] < 3000 {
		t.Fatalf("%d events: too few to renumber often", events[0])
	}
	// Every few insertions, so that a renumbering falls on every kind of
	// insertion (a port's own reservation as it starts a frame included).
	for _, every := range []uint64{1, 2, 3, 5, 7, 11, 13, 61, 300} {
		events = events[:1]
		if got := run(every); !reflect.DeepEqual(want, got) {
			t.Fatalf("renumbering every %d insertions changed the run:\n%+v\nwant\n%+v", every, got, want)
		}
		if events[1] < events[0] {
			t.Fatalf("renumbering every %d: %d events, fewer than %d", every, events[1], events[0])
		}
	}
}

// A NIC's QPs share one copy of the DCQCN parameters, capped for the
// NIC's line rate (a rate on first CNP and a floor above 400G come down to
// it), and carry no HPCC state unless HPCC is on; InitShared refuses
// parameters ForLine would change.
func TestQPsShareTheirNICsParameters(t *testing.T) {
	dq := mustPreset(t, "default")
	dq.RateOnFirstCNP, dq.MinRate = 800*units.Gbps, 500*units.Gbps
	_, tr := rig(t, 3, nicConfig(dq))
	a, b := tr.Connect(0, 1), tr.Connect(0, 2)
	qa, qb := tr.NICs[0].send[a.idx], tr.NICs[0].send[b.idx]
	if qa.rp.p != qb.rp.p || qa.rp.p != &tr.NICs[0].dcqcn {
		t.Fatal("two QPs of one NIC do not share its parameters")
	}
	if got := qa.ReactionPoint().Params(); got.RateOnFirstCNP != 400*units.Gbps || got.MinRate != 400*units.Gbps || got.AlphaG != dq.AlphaG {
		t.Fatalf("shared parameters %+v, want the preset capped at 400G", got)
	}
	if qa.HPCC() != nil {
		t.Fatal("a DCQCN QP has HPCC state")
	}
	cfg := nicConfig(DCQCNParams{})
	cfg.HPCC = HPCCParams{Enabled: true, Eta: 0.95, MaxStage: 5, RateAI: 50 * units.Mbps, MinRate: 100 * units.Mbps, BaseRTT: 10 * units.Microsecond}
	_, th := rig(t, 2, cfg)
	if q := th.NICs[0].send[th.Connect(0, 1).idx]; q.HPCC() == nil || q.HPCC().Rate() != 400*units.Gbps {
		t.Fatal("an HPCC QP has no HPCC state at line rate")
	}
	defer func() {
		if recover() == nil {
			t.Error("InitShared took parameters not capped for the line rate")
		}
	}()
	var r ReactionPoint
	r.InitShared(&dq, 400*units.Gbps)
}
