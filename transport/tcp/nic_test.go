package tcp

// Fabric tests of the adapter, on the fabrictest rig (which checks bytes,
// packets and single delivery after every run). The fixture is a dumbbell:
// hosts 0,1 on leaf0 and 2,3 on leaf1, one spine; host links 40 Gb/s,
// fabric links 10 Gb/s, 1 µs per link. A flow from leaf0 to leaf1
// is bottlenecked at leaf0's uplink (10 Gb/s), where the queue builds and
// the switch marks: step marking at K (kmin = kmax = K, pmax = 1), PFC off,
// a finite lossy buffer. MSS 1460 B + 78 B overhead = 1538 B on the wire.

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"fabriclab/fabric"
	"fabriclab/internal/fabrictest"
	"fabriclab/sim"
	"fabriclab/topo"
	"fabriclab/units"
)

const (
	us      = units.Microsecond
	mss     = 1460
	ovh     = 78
	wire    = mss + ovh
	kBytes  = 20 * wire // ECN threshold K: 20 full segments
	hostBW  = 40 * units.Gbps
	fabBW   = 10 * units.Gbps
	linkDly = 1 * us
)

type fixture struct {
	Spines, HostsPerLeaf, Hosts int
	K, Buffer                   int64 // K = 0: ECN off
	Params                      Params
	AckEvery                    int
	AckDelay                    sim.Time
	Seed                        uint64
	Lossless                    bool  // PFC on the data class
	ControlWire                 int32 // a pure ACK's wire size (0: the default)
}

func dumbbell() fixture {
	p := DefaultParams()
	return fixture{Spines: 1, HostsPerLeaf: 2, Hosts: 4, K: kBytes, Buffer: 1 << 20, Params: p, AckEvery: 1, Seed: 1}
}

// rig is the fabrictest rig (bytes, packets and single delivery checked
// after every run) with TCP on every host.
type rig struct {
	*fabrictest.Rig
	tr *Transport
}

func (f fixture) build(t testing.TB) *rig {
	t.Helper()
	sw := &fabric.SwitchConfig{Buffer: f.Buffer, MaxPacketWire: wire}
	if f.K > 0 {
		sw.ECN, sw.KMin, sw.KMax, sw.PMax = true, f.K, f.K, 1
	}
	if f.Lossless {
		sw.Lossless[0] = true
		sw.XOFF, sw.XON = 64<<10, 60<<10
	}
	spec := fabrictest.LeafSpine(f.Hosts, f.HostsPerLeaf, f.Spines,
		topo.Link{Rate: hostBW, Delay: linkDly}, topo.Link{Rate: fabBW, Delay: linkDly}, sw)
	spec.ECMPSeed = f.Seed
	r := &rig{Rig: fabrictest.New(t, f.Seed, spec)}
	r.tr = New(r.Net, Config{Params: f.Params, Overhead: ovh, AckEvery: f.AckEvery, AckDelay: f.AckDelay, DataPrio: 0, AckPrio: 6, ControlWire: f.ControlWire})
	fabrictest.Attach(r.Rig, &r.tr.Shell, nil)
	return r
}

// post posts message msg on connection c (and tells the rig to expect it).
func (r *rig) post(c Conn, msg int32, bytes int64) {
	r.Expect(msg, bytes)
	r.tr.Post(c, msg, bytes)
}

// uplink is leaf0's port toward the spine: the bottleneck of leaf0→leaf1.
func (r *rig) uplink() *fabric.Port { return r.Topo.Edge[0].Next[r.Topo.Hosts-1][0] }

// sampler records a port's queue every period in [from, to).
type sampler struct {
	sc        *sim.Scheduler
	pt        *fabric.Port
	period    sim.Time
	to        sim.Time
	n         int
	sum, sum2 float64
	min, max  int64
}

func sample(sc *sim.Scheduler, pt *fabric.Port, from, to, period sim.Time) *sampler {
	s := &sampler{sc: sc, pt: pt, period: period, to: to, min: math.MaxInt64}
	sc.At(from, s, 0)
	return s
}

func (s *sampler) OnEvent(now sim.Time, _ uint64) {
	q := s.pt.QueueBytes()
	s.n++
	s.sum += float64(q)
	s.sum2 += float64(q) * float64(q)
	s.min, s.max = min(s.min, q), max(s.max, q)
	if now+s.period < s.to {
		s.sc.At(now+s.period, s, 0)
	}
}

func (s *sampler) mean() float64 { return s.sum / float64(s.n) }
func (s *sampler) std() float64 {
	m := s.mean()
	return math.Sqrt(max(0, s.sum2/float64(s.n)-m*m))
}

// idealFCT is when the last bit of a message of size bytes, sent back to
// back from t = 0 over an idle store-and-forward path, reaches the
// receiver: with segments w_1…w_n (wire sizes) and hops of serialization
// time tx_h and delay d_h,
//
//	T = Σ_h d_h + max_k ( Σ_{h<k} tx_h(w_1) + Σ_i tx_k(w_i) + Σ_{h>k} tx_h(w_n) )
//
// (the bottleneck hop k serializes every segment; before it only the first
// counts, after it only the last). For n equal segments of wire W this is
// Σ_h (d_h + tx_h(W)) + (n−1)·max_h tx_h(W).
func idealFCT(size int64, rates []units.Rate, delay sim.Time) sim.Time {
	var segs []int64
	for left := size; left > 0; left -= mss {
		segs = append(segs, min(left, mss)+ovh)
	}
	tx := func(w int64, r units.Rate) sim.Time { return units.SerializationTime(units.Size(w), r) }
	best := sim.Time(0)
	for k := range rates {
		var t sim.Time
		for h := 0; h < k; h++ {
			t += tx(segs[0], rates[h])
		}
		for _, w := range segs {
			t += tx(w, rates[k])
		}
		for h := k + 1; h < len(rates); h++ {
			t += tx(segs[len(segs)-1], rates[h])
		}
		best = max(best, t)
	}
	return best + sim.Time(len(rates))*delay
}

// 1a. A message that fits the initial window (10 segments) goes out back
// to back and completes in the path latency plus serialization, exactly.
// For 10 × 1460 B: 4 µs of propagation + 2·307.6 ns (40G hops) + 2·1230.4
// ns (10G hops) + 9·1230.4 ns (the bottleneck) = 18.1492 µs.
func TestShortMessageCompletesInLatencyPlusSerialization(t *testing.T) {
	path := []units.Rate{hostBW, fabBW, fabBW, hostBW}
	if got := idealFCT(10*mss, path, linkDly); got != 18_149_600 {
		t.Fatalf("formula: %v", got)
	}
	for _, size := range []int64{1, 100, mss, 10000, 10 * mss} {
		r := dumbbell().build(t)
		c := r.tr.Connect(0, 2)
		r.post(c, 7, size)
		r.Run(-1)
		want := idealFCT(size, path, linkDly)
		if got, ok := r.Delivered[7]; !ok || got != want {
			t.Errorf("%d B: delivered at %v (%v), want %v", size, got, ok, want)
		}
		if r.tr.Sender(c).Acked() != units.Size(size) {
			t.Errorf("%d B: acked %d", size, r.tr.Sender(c).Acked())
		}
	}
}

// With an initial window of one segment, a 3-segment message needs a
// second round trip: it completes one ACK round trip (≈ 7.1 µs data + 4.2
// µs ACK) after the back-to-back bound would have it.
func TestMessageBeyondTheInitialWindowWaitsForAcks(t *testing.T) {
	f := dumbbell()
	f.Params.InitCwnd = 1
	r := f.build(t)
	c := r.tr.Connect(0, 2)
	r.post(c, 1, 3*mss)
	r.Run(-1)
	ideal := idealFCT(3*mss, []units.Rate{hostBW, fabBW, fabBW, hostBW}, linkDly)
	t.Logf("3 segments, InitCwnd 1: %v (back-to-back %v)", r.Delivered[1], ideal)
	if got := r.Delivered[1]; got < ideal+8*us {
		t.Fatalf("3 segments at %v, back-to-back bound %v: the window was not respected", got, ideal)
	}
}

// steady measures flows c over [from, to): throughput of each as a fraction
// of the bottleneck's wire rate (payload scaled by wire/MSS: full segments).
func steady(r *rig, cs []Conn, from, to sim.Time) []float64 {
	start := make([]units.Size, len(cs))
	r.Run(from)
	for i, c := range cs {
		start[i] = r.tr.Receiver(c).Received()
	}
	r.Run(to)
	out := make([]float64, len(cs))
	for i, c := range cs {
		b := float64(r.tr.Receiver(c).Received()-start[i]) * wire / mss
		out[i] = b * 8 / (float64(to-from) / 1e12) / float64(fabBW)
	}
	return out
}

// 1b. One long DCTCP flow: after slow start it runs at line rate on the
// 10 Gb/s bottleneck, and the bottleneck queue oscillates around K.
func TestDCTCPSingleFlowLineRateQueueAroundK(t *testing.T) {
	for _, every := range []int{1, 2} {
		t.Run(fmt.Sprintf("ackEvery=%d", every), func(t *testing.T) {
			f := dumbbell()
			f.AckEvery, f.AckDelay = every, 10*us
			r := f.build(t)
			c := r.tr.Connect(0, 2)
			r.post(c, 1, 1<<30)
			s := sample(r.Sched, r.uplink(), 2*units.Millisecond, 10*units.Millisecond, 1*us)
			thr := steady(r, []Conn{c}, 2*units.Millisecond, 10*units.Millisecond)[0]
			snd := r.tr.Sender(c)
			t.Logf("throughput %.4f of 10G; queue mean %.0f B (K = %d B) σ %.0f min %d max %d; α %.3f cwnd %d; drops %d, marks %d",
				thr, s.mean(), kBytes, s.std(), s.min, s.max, snd.Alpha(), snd.Cwnd(), r.Net.DroppedPackets, r.uplink().C.ECNMarks)
			if thr < 0.9 {
				t.Errorf("throughput %.3f of the bottleneck, want ≥ 0.9", thr)
			}
			if m := s.mean(); m < 0.5*kBytes || m > 1.5*kBytes {
				t.Errorf("mean queue %.0f B, want around K = %d B", m, kBytes)
			}
			if s.max > 3*kBytes || r.Net.DroppedPackets > 0 {
				t.Errorf("queue peaked at %d B, drops %d", s.max, r.Net.DroppedPackets)
			}
		})
	}
}

func jain(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	return s * s / (float64(len(x)) * s2)
}

// 2. Two DCTCP flows from two senders through one bottleneck to one
// receiver share it fairly (Jain's index ≥ 0.95) and fill it. The second
// starts 1 ms after the first, which must give way.
func TestDCTCPTwoFlowsShareFairly(t *testing.T) {
	r := dumbbell().build(t)
	a, b := r.tr.Connect(0, 2), r.tr.Connect(1, 2)
	r.post(a, 1, 1<<30)
	r.Run(units.Millisecond)
	r.post(b, 2, 1<<30)
	s := sample(r.Sched, r.uplink(), 4*units.Millisecond, 14*units.Millisecond, 1*us)
	x := steady(r, []Conn{a, b}, 4*units.Millisecond, 14*units.Millisecond)
	j := jain(x)
	t.Logf("shares %.4f %.4f (sum %.4f) Jain %.4f; queue mean %.0f B σ %.0f max %d", x[0], x[1], x[0]+x[1], j, s.mean(), s.std(), s.max)
	if j < 0.95 {
		t.Errorf("Jain index %.3f, want ≥ 0.95", j)
	}
	if x[0]+x[1] < 0.9 {
		t.Errorf("total %.3f of the bottleneck", x[0]+x[1])
	}
}

// 3. A buffer of 6 segments (marking at 3) cannot hold what two
// slow-starting flows and an incast send: packets are dropped, yet every message completes (fast
// retransmit, NewReno partial ACKs, RTO), retransmissions are counted and
// every byte is accounted for.
func TestLossEveryMessageCompletes(t *testing.T) {
	for _, mode := range []Mode{DCTCP, Reno} {
		t.Run(mode.String(), func(t *testing.T) {
			f := dumbbell()
			f.Buffer, f.K = 6*wire, 3*wire
			f.Params.Mode = mode
			f.Params.MinRTO, f.Params.InitRTO = 200*us, 200*us
			r := f.build(t)
			msgs := 0
			for src := 0; src < 2; src++ {
				for dst := 2; dst < 4; dst++ {
					c := r.tr.Connect(src, dst)
					for k := 0; k < 5; k++ {
						r.post(c, int32(msgs), int64(1000+97*msgs*msgs)%300_000+1)
						msgs++
					}
				}
			}
			end := r.Run(-1)
			s, rc := r.tr.Stats()
			cn := r.tr.Counters()
			t.Logf("done at %v: drops %d, retransmits %d (fast %d), timeouts %d, out of order %d, ECN cuts %d",
				end, r.Net.DroppedPackets, cn.Retransmits, s.FastRetransmits, cn.Timeouts, rc.OutOfOrder, s.ECNCuts)
			if len(r.Delivered) != msgs {
				t.Fatalf("%d of %d messages delivered", len(r.Delivered), msgs)
			}
			if r.Net.DroppedPackets == 0 || cn.Retransmits == 0 {
				t.Fatalf("drops %d retransmits %d: the test lost its point", r.Net.DroppedPackets, cn.Retransmits)
			}
			if cn.Retransmits != int64(s.Retransmits) || cn.Timeouts != int64(s.RTOs) || cn.OutOfOrder != int64(rc.OutOfOrder) {
				t.Fatalf("NIC counters %+v disagree with the state machines %+v %+v", cn, s, rc)
			}
		})
	}
}

// A buffer that holds only the two frames per queue the switch always
// guarantees: most of every flight is lost, including tails that no
// duplicate ACK reveals, so the retransmission timeout must do part of the
// repair. Every message still completes.
func TestTinyBufferNeedsTheRTOAndStillCompletes(t *testing.T) {
	f := dumbbell()
	f.Params.InitRTO, f.Params.MinRTO = 500*us, 500*us
	f.Buffer = 1 // lossy: only the 2-frame guarantee per queue remains
	r := f.build(t)
	a, b, c := r.tr.Connect(0, 2), r.tr.Connect(1, 2), r.tr.Connect(1, 3)
	r.post(a, 1, 40*mss)
	r.post(b, 2, 40*mss)
	r.post(c, 3, 40*mss)
	r.Run(-1)
	cn := r.tr.Counters()
	t.Logf("2-frame queues: drops %d, retransmits %d, timeouts %d, done at %v", r.Net.DroppedPackets, cn.Retransmits, cn.Timeouts, r.Sched.Now())
	if len(r.Delivered) != 3 || cn.Timeouts == 0 {
		t.Fatalf("delivered %d, timeouts %d", len(r.Delivered), cn.Timeouts)
	}
}

// 4. Head-of-line blocking: a short message posted behind a long one on
// the same connection is delivered only after all of it; on a connection
// of its own it is delivered at once.
func TestHeadOfLineBlockingOnOneConnection(t *testing.T) {
	const long = 2 << 20
	r := dumbbell().build(t)
	c := r.tr.Connect(0, 2)
	r.post(c, 1, long)
	r.post(c, 2, 1000)
	r.Run(-1)
	shared := r.Delivered[2]
	if !(r.Delivered[2] >= r.Delivered[1]) || !reflect.DeepEqual(r.Order, []int32{1, 2}) {
		t.Fatalf("same connection: long at %v, short at %v", r.Delivered[1], r.Delivered[2])
	}

	r = dumbbell().build(t)
	c1, c2 := r.tr.Connect(0, 2), r.tr.Connect(0, 2)
	r.post(c1, 1, long)
	r.post(c2, 2, 1000)
	r.Run(-1)
	alone := idealFCT(1000, []units.Rate{hostBW, fabBW, fabBW, hostBW}, linkDly)
	t.Logf("short behind long on one connection: %v (long %v); on its own connection: %v (alone on the idle path %v)",
		shared, r.Delivered[1], r.Delivered[2], alone)
	if r.Delivered[2] > 10*alone || r.Delivered[2]*10 > r.Delivered[1] {
		t.Fatalf("separate connections: short at %v, long at %v", r.Delivered[2], r.Delivered[1])
	}
}

// 5. Plain TCP against DCTCP on the same bottleneck (K = 20 segments,
// 400 KB buffer): loss-based TCP (Reno without ECN) fills the buffer until
// it drops; Reno with ECN halves at K and drains the queue; DCTCP holds it
// near K with small swings. Two flows each.
func TestDCTCPKeepsASmallerQueueThanTCP(t *testing.T) {
	type res struct {
		mean, std float64
		max       int64
		thr       float64
		drops     int64
	}
	run := func(mode Mode, noECN bool) res {
		f := dumbbell()
		f.Buffer = 400_000
		f.Params.Mode, f.Params.NoECN = mode, noECN
		r := f.build(t)
		a, b := r.tr.Connect(0, 2), r.tr.Connect(1, 3)
		r.post(a, 1, 1<<30)
		r.post(b, 2, 1<<30)
		s := sample(r.Sched, r.uplink(), 5*units.Millisecond, 25*units.Millisecond, 1*us)
		x := steady(r, []Conn{a, b}, 5*units.Millisecond, 25*units.Millisecond)
		return res{s.mean(), s.std(), s.max, x[0] + x[1], r.Net.DroppedPackets}
	}
	tcp := run(Reno, true)
	ecn := run(Reno, false)
	dc := run(DCTCP, false)
	for _, x := range []struct {
		name string
		r    res
	}{{"TCP (Reno, drop-tail)", tcp}, {"TCP (Reno + ECN)", ecn}, {"DCTCP", dc}} {
		t.Logf("%-22s queue mean %6.0f B σ %6.0f max %6d, throughput %.4f, drops %d", x.name, x.r.mean, x.r.std, x.r.max, x.r.thr, x.r.drops)
	}
	if dc.mean*4 > tcp.mean || dc.max*4 > tcp.max {
		t.Errorf("DCTCP queue %.0f B (max %d) not much smaller than TCP's %.0f B (max %d)", dc.mean, dc.max, tcp.mean, tcp.max)
	}
	if dc.thr < 0.9 || dc.drops != 0 {
		t.Errorf("DCTCP throughput %.3f drops %d", dc.thr, dc.drops)
	}
	if ecn.std <= dc.std {
		t.Errorf("Reno+ECN queue σ %.0f ≤ DCTCP's %.0f: halving should swing more", ecn.std, dc.std)
	}
}

// 6. Same seed, same run: identical delivery times and event counts, on a
// two-spine fabric where the seed picks the ECMP paths.
func TestDeterministicForASeed(t *testing.T) {
	run := func(seed uint64) ([]int32, []sim.Time, uint64) {
		f := dumbbell()
		f.Spines, f.Hosts, f.HostsPerLeaf, f.Seed = 2, 8, 4, seed
		f.Buffer = 60_000
		f.Params.MinRTO, f.Params.InitRTO = 200*us, 200*us
		r := f.build(t)
		rng := sim.NewRNG(seed, "test")
		msg := int32(0)
		for src := 0; src < 4; src++ {
			for k := 0; k < 3; k++ {
				c := r.tr.Connect(src, 4+rng.IntN(4))
				for m := 0; m < 4; m++ {
					r.post(c, msg, 1+rng.Int64N(200_000))
					msg++
				}
			}
		}
		r.Run(-1)
		if len(r.Delivered) != int(msg) {
			t.Fatalf("%d of %d delivered", len(r.Delivered), msg)
		}
		times := make([]sim.Time, len(r.Order))
		for i, m := range r.Order {
			times[i] = r.Delivered[m]
		}
		return r.Order, times, r.Sched.Executed
	}
	o1, t1, e1 := run(42)
	o2, t2, e2 := run(42)
	if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(t1, t2) || e1 != e2 {
		t.Fatalf("two runs with seed 42 differ (events %d vs %d)", e1, e2)
	}
	_, t3, _ := run(43)
	t.Logf("seed 42: %d messages, last at %v, %d events; seed 43: last at %v", len(o1), t1[len(t1)-1], e1, t3[len(t3)-1])
}

// PFC: with the data class lossless and a small XOFF, an incast of four
// senders into one receiver pauses the sending NICs (Pull honours the
// pause) and nothing is dropped.
func TestPFCPausesTheNICWithoutLoss(t *testing.T) {
	f := dumbbell()
	f.Hosts, f.HostsPerLeaf = 6, 3
	f.K = 0
	f.Lossless = true
	f.Params.Mode, f.Params.NoECN = Reno, true
	r := f.build(t)
	for src := 0; src < 5; src++ {
		r.post(r.tr.Connect(src, 5), int32(src), 2<<20)
	}
	r.Run(-1)
	var pauses int64
	for h := 0; h < 5; h++ {
		pauses += r.Net.HostPorts[h].C.PFCPausesRecv
	}
	t.Logf("incast 5→1 lossless: %d pauses at the NICs, drops %d, done at %v", pauses, r.Net.DroppedPackets, r.Sched.Now())
	if len(r.Delivered) != 5 || r.Net.DroppedPackets != 0 || pauses == 0 {
		t.Fatalf("delivered %d, drops %d, NIC pauses %d", len(r.Delivered), r.Net.DroppedPackets, pauses)
	}
}

// Delayed ACKs: with AckEvery = 2 a lone segment is acknowledged by the
// receiver's timer, AckDelay after it arrived.
func TestDelayedAckTimerAcknowledgesALoneSegment(t *testing.T) {
	f := dumbbell()
	f.AckEvery, f.AckDelay = 2, 20*us
	r := f.build(t)
	c := r.tr.Connect(0, 2)
	r.post(c, 1, 500)
	r.Run(10 * us)
	arrived, ok := r.Delivered[1]
	if !ok {
		t.Fatal("not delivered in 10 µs")
	}
	// The ACK leaves host 2 at arrived + 20 µs and crosses 4 links of 1 µs
	// (84 B: 16.8 ns at 40G, 67.2 ns at 10G).
	at := arrived + 20*us + 4*us + 2*16_800 + 2*67_200
	r.Run(at - 1)
	if r.tr.Sender(c).Acked() != 0 {
		t.Fatalf("acknowledged before %v", at)
	}
	r.Run(at)
	if r.tr.Sender(c).Acked() != 500 {
		t.Fatalf("not acknowledged at %v", at)
	}
}

// The per-packet path allocates nothing: after warm-up, two competing
// DCTCP flows (ECN marks, window cuts, RTO re-arming, ACKs) run for 200 µs
// more (about 300 segments and as many ACKs) without one allocation.
func TestSteadyStreamDoesNotAllocate(t *testing.T) {
	for _, every := range []int{1, 2} {
		f := dumbbell()
		f.AckEvery, f.AckDelay = every, 5*us
		r := f.build(t)
		r.post(r.tr.Connect(0, 2), 1, 1<<40)
		r.post(r.tr.Connect(1, 3), 2, 1<<40)
		r.Run(2 * units.Millisecond)
		allocs := testing.AllocsPerRun(20, func() { r.Sched.Run(r.Sched.Now() + 200*us) })
		if allocs != 0 {
			t.Fatalf("ackEvery %d: %.1f allocations per 200 µs of steady traffic", every, allocs)
		}
	}
}

// BenchmarkSteadyStream: ns per delivered data segment of two DCTCP flows.
func BenchmarkSteadyStream(b *testing.B) {
	r := dumbbell().build(b)
	r.post(r.tr.Connect(0, 2), 1, 1<<50)
	r.post(r.tr.Connect(1, 3), 2, 1<<50)
	r.Run(units.Millisecond)
	seg0, _ := r.tr.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Sched.Run(r.Sched.Now() + 100*us)
	}
	b.StopTimer()
	seg1, _ := r.tr.Stats()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(seg1.Segments-seg0.Segments), "ns/segment")
}
