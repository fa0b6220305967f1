package fabric_test

import (
	"fmt"
	"reflect"
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

const (
	us   = units.Microsecond
	g400 = 400 * units.Gbps
	g100 = 100 * units.Gbps
	mtuW = 4178 // 4096 B payload + 82 B RoCEv2 wire overhead
	// t400 is mtuW at 400G: 4178 B × 20 ps/B.
	t400 = sim.Time(83560)
)

// testHost stands in for a NIC: Pull hands the port the next packet of a
// pre-made list (copied into a pool packet, so the pool's reuse shows)
// unless its priority is paused; Receive records and consumes.
type testHost struct {
	id   int
	net  *fabric.Network
	port *fabric.Port

	send      []fabric.Packet // templates, handed out in order
	sent      int
	grants    []sim.Time // when each template went to the port
	refusedAt []sim.Time // Pulls refused because the next packet's prio was paused
	ptrs      map[*fabric.Packet]bool

	got []rx
	// ints are the telemetry records of the packets received with one.
	ints []fabric.INTRecord
	// idle: Idle is true once every template is sent (a test that adds
	// templates later kicks the port).
	idle bool
}

type rx struct {
	at   sim.Time
	src  int32
	psn  int64
	prio uint8
	ce   bool
	kind fabric.Kind
	wire int32
}

func (h *testHost) Name() string { return fmt.Sprintf("h%d", h.id) }

func (h *testHost) Receive(p *fabric.Packet, in *fabric.Port) {
	if in != h.port {
		panic(fmt.Sprintf("%s: packet delivered on a foreign port", h.Name()))
	}
	h.got = append(h.got, rx{at: h.net.Sched.Now(), src: p.Src, psn: p.PSN, prio: p.Prio, ce: p.CE, kind: p.Kind, wire: p.Wire})
	if p.INT != 0 {
		h.ints = append(h.ints, *h.net.INT.Get(p.INT))
	}
	h.net.Consume(p)
}

func (h *testHost) Idle() bool { return h.idle && h.sent == len(h.send) }

func (h *testHost) Pull(now sim.Time, pt *fabric.Port) *fabric.Packet {
	if pt != h.port {
		panic("pulled by a foreign port")
	}
	if h.sent == len(h.send) {
		return nil
	}
	tmpl := &h.send[h.sent]
	if pt.Paused(tmpl.Prio) {
		h.refusedAt = append(h.refusedAt, now)
		return nil
	}
	p := h.net.Pool.Get()
	*p = *tmpl
	if tmpl.INT != 0 { // a template asking for telemetry
		p.INT = h.net.INT.New()
	}
	h.sent++
	h.grants = append(h.grants, now)
	if h.ptrs != nil {
		h.ptrs[p] = true
	}
	return p
}

// queue appends n data packets of wire bytes toward dst at prio, PSN-numbered.
func (h *testHost) queue(dst, n int, wire int32, prio uint8) {
	for k := 0; k < n; k++ {
		h.send = append(h.send, fabric.Packet{Kind: fabric.Data, Prio: prio, Wire: wire, Payload: max(wire-82, 0),
			Src: int32(h.id), Dst: int32(dst), PSN: int64(len(h.send))})
	}
}

// bed is one switch with a host on each port.
type bed struct {
	s     *sim.Scheduler
	net   *fabric.Network
	sw    *fabric.Switch
	hosts []*testHost
}

func newStar(cfg *fabric.SwitchConfig, delay sim.Time, rates ...units.Rate) *bed {
	s := sim.NewScheduler()
	net := fabric.NewNetwork(s, 1, len(rates))
	sw := net.AddSwitch("sw", "leaf", cfg, 7)
	sw.Next = make([][]*fabric.Port, len(rates))
	b := &bed{s: s, net: net, sw: sw}
	for h, r := range rates {
		hp := net.ConnectHost(h, sw, r, delay)
		th := &testHost{id: h, net: net, port: hp}
		net.SetHost(h, th, th)
		sw.Next[h] = []*fabric.Port{hp.Peer}
		b.hosts = append(b.hosts, th)
	}
	return b
}

// start kicks every host port (in host order) at time 0.
func (b *bed) start() {
	for _, h := range b.hosts {
		h.port.Kick()
	}
}

func (b *bed) checkBalance(t *testing.T, when string) {
	t.Helper()
	c := b.net.Balance()
	if !c.OK {
		t.Fatalf("%s: conservation violated: %+v", when, c)
	}
}

func (b *bed) checkEnd(t *testing.T) {
	t.Helper()
	b.checkBalance(t, "end")
	if c := b.net.Balance(); c.InFlightBytes != 0 {
		t.Errorf("end: %d bytes still in flight", c.InFlightBytes)
	}
	if b.net.Pool.Live != 0 {
		t.Errorf("end: pool has %d live packets, want 0", b.net.Pool.Live)
	}
}

func lossy() *fabric.SwitchConfig { return &fabric.SwitchConfig{Buffer: 1 << 30, MaxPacketWire: mtuW} }

// A packet crossing host→switch→host is stored and forwarded: it arrives
// after its serialization on each link plus each link's delay (plus the
// switch's forwarding latency), to the picosecond.
func TestHostSwitchHostArrivalIsTxPlusDelayPerHop(t *testing.T) {
	if got := units.SerializationTime(mtuW, g400); got != t400 {
		t.Fatalf("4178 B at 400G = %d ps, want %d", got, t400)
	}
	for _, tc := range []struct {
		fwd  sim.Time
		want sim.Time
	}{
		{0, t400 + us + t400 + us},
		{500 * units.Nanosecond, t400 + us + t400 + us + 500*units.Nanosecond},
	} {
		cfg := lossy()
		cfg.ForwardingLatency = tc.fwd
		b := newStar(cfg, us, g400, g400)
		b.hosts[0].queue(1, 1, mtuW, 3)
		b.start()
		b.s.Run(-1)
		got := b.hosts[1].got
		if len(got) != 1 {
			t.Fatalf("fwd %v: %d packets delivered, want 1", tc.fwd, len(got))
		}
		if got[0].at != tc.want {
			t.Errorf("fwd %v: arrival at %d ps, want %d ps", tc.fwd, got[0].at, tc.want)
		}
		if b.net.InjectedPackets != 1 || b.net.DeliveredPackets != 1 || b.net.DeliveredBytes != mtuW {
			t.Errorf("counts: injected %d delivered %d (%d B)", b.net.InjectedPackets, b.net.DeliveredPackets, b.net.DeliveredBytes)
		}
		if c := b.hosts[0].port.Counters(b.net.Sched.Now()); c.TxPackets != 1 || c.TxBytes != mtuW {
			t.Errorf("host port tx counters %+v", c)
		}
		b.checkEnd(t)
	}
}

// Back-to-back packets come out of every pipe in order, each one
// serialization time after the previous (store-and-forward, work-conserving
// egress). Checked against a two-stage reference model with mixed sizes and
// a slower or faster output link.
func TestPipeDeliversInOrderAtSerializationSpacing(t *testing.T) {
	sizes := []int32{mtuW, 146, 1582, 9082, 64, mtuW, 2000}
	for _, tc := range []struct {
		in, out  units.Rate
		observed bool // an Observer hears each packet's wait in the switch
	}{
		{g400, g400, false}, {g400, g100, false}, {g100, g400, false},
		// With an observer a packet's enq holds its queueing start in the
		// switch and the next packet's arrival on a wire, in turn.
		{g400, g100, true}, {g100, g400, true},
	} {
		b := newStar(lossy(), us, tc.in, tc.out)
		var waits []sim.Time
		if tc.observed {
			b.net.SetObserver(waitLog{&waits})
		}
		const n = 200
		for k := 0; k < n; k++ {
			b.hosts[0].queue(1, 1, sizes[k%len(sizes)], 3)
		}
		b.start()
		b.s.Run(-1)
		got := b.hosts[1].got
		if len(got) != n {
			t.Fatalf("%v→%v: %d delivered, want %d", tc.in, tc.out, len(got), n)
		}
		var hostDone, egressDone sim.Time
		for k, r := range got {
			w := sizes[k%len(sizes)]
			hostDone += units.SerializationTime(units.Size(w), tc.in)
			arriveSw := hostDone + us
			start := max(arriveSw, egressDone)
			egressDone = start + units.SerializationTime(units.Size(w), tc.out)
			if r.psn != int64(k) || r.wire != w {
				t.Fatalf("%v→%v: packet %d is psn %d (%d B), want in order", tc.in, tc.out, k, r.psn, r.wire)
			}
			if want := egressDone + us; r.at != want {
				t.Fatalf("%v→%v: packet %d at %d ps, want %d", tc.in, tc.out, k, r.at, want)
			}
			if tc.observed && (len(waits) <= k || waits[k] != start-arriveSw) {
				t.Fatalf("%v→%v: packet %d's wait in the switch not heard as %d ps (heard %d waits)", tc.in, tc.out, k, start-arriveSw, len(waits))
			}
		}
		b.checkEnd(t)
	}

	// Equal sizes at one rate: spacing is exactly one serialization time.
	b := newStar(lossy(), us, g400, g400)
	b.hosts[0].queue(1, 50, mtuW, 3)
	b.start()
	b.s.Run(-1)
	got := b.hosts[1].got
	for k := 1; k < len(got); k++ {
		if d := got[k].at - got[k-1].at; d != t400 {
			t.Fatalf("packets %d,%d spaced %d ps, want %d", k-1, k, d, t400)
		}
	}
}

// waitLog is an Observer that keeps each data packet's wait in a switch.
type waitLog struct{ waits *[]sim.Time }

func (l waitLog) Queued(_ *fabric.Packet, _ *fabric.Port, wait, _ sim.Time) {
	*l.waits = append(*l.waits, wait)
}

// A pipe is a FIFO with only its head scheduled: with hundreds of packets
// on the wires the heap holds at most a tx-done and an arrival per busy port.
func TestEventHeapStaysSmallWithManyPacketsInFlight(t *testing.T) {
	b := newStar(lossy(), 20*us, g400, g400)
	const n = 2000
	b.hosts[0].queue(1, n, mtuW, 3)
	maxPending, maxInFlight := 0, int64(0)
	b.s.StopPollEvery = 1
	b.s.StopHook = func(sim.Time) bool {
		maxPending = max(maxPending, b.s.Pending())
		maxInFlight = max(maxInFlight, b.net.Balance().InFlightBytes/mtuW)
		return false
	}
	b.start()
	b.s.Run(-1)
	// Two ports carry traffic (host 0's NIC and the switch's port to host 1).
	if maxPending > 2*2 {
		t.Errorf("heap held up to %d events, want ≤ 4", maxPending)
	}
	// 20 µs at 83.56 ns per packet on each of two wires.
	if maxInFlight < 450 {
		t.Errorf("only %d packets in flight at most; the test needs many", maxInFlight)
	}
	if len(b.hosts[1].got) != n {
		t.Fatalf("%d delivered, want %d", len(b.hosts[1].got), n)
	}
	b.checkEnd(t)
}

// Strict priority: a prio-6 packet reaching a busy egress leaves right after
// the packet on the wire, ahead of five prio-3 packets queued before it.
func TestStrictPriorityHighPrioOvertakesQueuedLowPrio(t *testing.T) {
	// h0 (400G) bursts ten prio-3 frames, h1 (50G) sends one prio-6 4000 B
	// frame, both to h2 at 100G.
	b := newStar(lossy(), us, g400, 50*units.Gbps, g100)
	b.hosts[0].queue(2, 10, mtuW, 3)
	b.hosts[1].queue(2, 1, 4000, 6)
	b.start()
	b.s.Run(-1)
	got := b.hosts[2].got
	type id struct {
		src int32
		psn int64
	}
	want := []id{{0, 0}, {0, 1}, {1, 0}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {0, 8}, {0, 9}}
	if len(got) != len(want) {
		t.Fatalf("%d delivered, want %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k].src != w.src || got[k].psn != w.psn {
			t.Fatalf("delivery %d is h%d psn %d, want h%d psn %d (order %v)", k, got[k].src, got[k].psn, w.src, w.psn, got)
		}
	}
	// h0 frame k reaches the switch at (k+1)·t400+1µs; the 100G egress
	// sends frame 0 from 1083560 to 1417800 and frame 1 until 1752040. The
	// prio-6 frame arrives at 640000+1µs (frames 2..6 are queued by then)
	// and goes next: 320000 ps on the wire, then 1 µs.
	t100 := 4 * t400
	f1 := t400 + us + 2*t100
	if want := f1 + 320000 + us; got[2].at != want {
		t.Errorf("prio-6 frame delivered at %d ps, want %d", got[2].at, want)
	}
	if want := f1 + 320000 + 8*t100 + us; got[10].at != want {
		t.Errorf("last frame delivered at %d ps, want %d", got[10].at, want)
	}
	b.checkEnd(t)
}

// ECN (RED on egress queue depth, per priority): a data packet that finds
// the queue at or above Kmax is marked, at or below Kmin it is not.
// Thresholds scale with port rate over ECNRefRateBps. Packets are handed to
// the switch directly at time 0 so packet k (k ≥ 1) finds exactly (k−1)
// packets queued behind the one on the wire.
func TestECNMarksAboveKMaxNotBelowKMin(t *testing.T) {
	const w = 1000
	for _, tc := range []struct {
		name            string
		rate            units.Rate
		kmin, kmax, ref int64
		// effective thresholds on the port, in packets
		effMin, effMax int
	}{
		{"unscaled", g400, 3000, 6000, 0, 3, 6},
		{"100G reference on 400G port: ×4", g400, 1000, 2000, 100e9, 4, 8},
		{"400G reference on 100G port: ÷4", g100, 8000, 16000, 400e9, 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := lossy()
			cfg.ECN, cfg.KMin, cfg.KMax, cfg.PMax, cfg.ECNRefRateBps = true, tc.kmin, tc.kmax, 1, tc.ref
			b := newStar(cfg, us, tc.rate, tc.rate)
			in, out := b.hosts[0].port.Peer, b.hosts[1].port.Peer
			const n = 20
			for k := 0; k < n; k++ {
				p := b.net.Pool.Get()
				p.Kind, p.Prio, p.Wire, p.Src, p.Dst, p.PSN = fabric.Data, 3, w, 0, 1, int64(k)
				b.sw.Receive(p, in)
			}
			// A control packet on a long queue is never marked.
			p := b.net.Pool.Get()
			p.Kind, p.Prio, p.Wire, p.Src, p.Dst, p.PSN = fabric.Ack, 3, w, 0, 1, n
			b.sw.Receive(p, in)
			b.s.Run(-1)
			got := b.hosts[1].got
			if len(got) != n+1 {
				t.Fatalf("%d delivered, want %d", len(got), n+1)
			}
			marks := int64(0)
			for _, r := range got {
				q := int(r.psn) - 1 // packets queued when it arrived
				if r.kind != fabric.Data {
					if r.ce {
						t.Errorf("%v packet marked", r.kind)
					}
					continue
				}
				if r.ce {
					marks++
				}
				switch {
				case q <= tc.effMin && r.ce:
					t.Errorf("packet %d marked with %d B queued (Kmin %d B)", r.psn, max(q, 0)*w, tc.effMin*w)
				case q >= tc.effMax && !r.ce:
					t.Errorf("packet %d not marked with %d B queued (Kmax %d B)", r.psn, q*w, tc.effMax*w)
				}
			}
			if out.C.ECNMarks != marks {
				t.Errorf("port counted %d marks, receiver saw %d", out.C.ECNMarks, marks)
			}
			if want := int64(n - 1 - tc.effMax); marks < want {
				t.Errorf("%d marks, want at least %d", marks, want)
			}
			if b.net.Pool.Live != 0 {
				t.Errorf("pool live %d", b.net.Pool.Live)
			}
		})
	}
}

// AutoHeadroom = line rate × (2·delay + pause frame time) + 2 max frames.
// 400G, 1 µs: (2 000 000 + 84·20) ps × 50 B/ns = 100 084 B, + 2×4178.
func TestAutoHeadroomClosedForm(t *testing.T) {
	if got := fabric.AutoHeadroom(g400, us, mtuW); got != 100084+2*mtuW {
		t.Errorf("AutoHeadroom(400G, 1us, 4178) = %d, want %d", got, 100084+2*mtuW)
	}
	if got := fabric.AutoHeadroom(g100, 500*units.Nanosecond, 1582); got != 12584+2*1582 {
		t.Errorf("AutoHeadroom(100G, 500ns, 1582) = %d, want %d", got, 12584+2*1582)
	}
}

// The closed form is an integer number of bytes for these rates; computing
// it through float seconds loses a byte for some delays.
func TestAutoHeadroomIsExactInteger(t *testing.T) {
	for _, tc := range []struct {
		rate  units.Rate
		delay sim.Time
		want  int64 // rate × (2·delay + 84 B time) / 8, exact
	}{
		{g400, us, 100084},
		{g400, 2 * us, 200084},
		{g400, 4400 * units.Nanosecond, 440084},
		{g100, 2100 * units.Nanosecond, 52584},
		{800 * units.Gbps, us, 200084},
	} {
		if got := fabric.AutoHeadroom(tc.rate, tc.delay, 0); got != tc.want {
			t.Errorf("AutoHeadroom(%v, %v, 0) = %d, want %d", tc.rate, tc.delay, got, tc.want)
		}
	}
}

func pfcConfig(xoff, xon int64) *fabric.SwitchConfig {
	cfg := &fabric.SwitchConfig{Buffer: 1 << 30, XOFF: xoff, XON: xon, MaxPacketWire: mtuW}
	cfg.Lossless[3] = true
	return cfg
}

// One 400G sender into a 100G output: the pause leaves when the ingress
// first exceeds XOFF and reaches the host one pause frame time plus the link
// delay later; the host finishes the frame on its wire and stops; the resume
// leaves when the ingress drains to XON. Every instant is a closed form.
func TestPFCPauseAndResumeTimingClosedForm(t *testing.T) {
	const n = 34
	b := newStar(pfcConfig(5*mtuW, 2*mtuW), us, g400, g100)
	h := b.hosts[0]
	h.queue(1, n, mtuW, 3)
	pauseFrame := sim.Time(fabric.PauseFrameWire * 20)
	// Frame k reaches the switch at (k+1)·t400 + 1µs; the 100G egress
	// dequeues one every 4·t400, so after frame k is admitted the ingress
	// holds k − ⌊k/4⌋ frames: 6 > XOFF=5 first at k = 7.
	pauseAt := 8*t400 + 2*us + pauseFrame
	// The host is sending frame 31 then; it stops after it, at 32·t400.
	// The ingress holds 24 frames; it reaches XON=2 when frame 29 is
	// dequeued at t400+1µs + 29·4·t400.
	resumeAt := 117*t400 + 2*us + pauseFrame

	b.start()
	b.s.Run(pauseAt + 1000)
	if !h.port.Paused(3) {
		t.Fatalf("host not paused at %d ps", b.s.Now())
	}
	if h.port.Paused(2) || h.port.Paused(4) {
		t.Errorf("a lossy priority was paused")
	}
	c := h.port.Counters(b.s.Now())
	if want := sim.Time(1000).Seconds(); c.PFCPausedS != want || h.port.C.PFCPausedS != 0 {
		t.Errorf("mid-pause: Counters(now).PFCPausedS = %g (closed interval %g), want %g", c.PFCPausedS, h.port.C.PFCPausedS, want)
	}
	b.checkBalance(t, "mid-pause")
	b.s.Run(-1)

	if len(h.grants) != n || h.grants[31] != 31*t400 || h.grants[32] != resumeAt {
		t.Fatalf("grants %d; frame 31 at %d ps (want %d), frame 32 at %d (want %d)", len(h.grants), h.grants[31], 31*t400, h.grants[32], resumeAt)
	}
	if len(h.refusedAt) != 1 || h.refusedAt[0] != 32*t400 {
		t.Errorf("refused pulls at %v, want exactly one at %d", h.refusedAt, 32*t400)
	}
	in := h.port.Peer
	if in.C.PFCPausesSent != 1 || h.port.C.PFCPausesRecv != 1 {
		t.Errorf("pauses sent %d received %d, want 1 and 1", in.C.PFCPausesSent, h.port.C.PFCPausesRecv)
	}
	end := b.s.Now()
	if want := (resumeAt - pauseAt).Seconds(); h.port.Counters(end).PFCPausedS != want {
		t.Errorf("paused %g s, want %g s (109 frame times)", h.port.Counters(end).PFCPausedS, want)
	}
	// The last two frames meet an idle egress: 32 goes straight out, 33
	// waits for it.
	if want := resumeAt + 9*t400 + 2*us; end != want || b.hosts[1].got[n-1].at != want {
		t.Errorf("last delivery at %d ps, want %d", b.hosts[1].got[n-1].at, want)
	}
	if b.net.DroppedPackets != 0 || len(b.hosts[1].got) != n {
		t.Errorf("dropped %d, delivered %d of %d", b.net.DroppedPackets, len(b.hosts[1].got), n)
	}
	b.checkEnd(t)
}

// Two 400G senders into one 400G output on a lossless priority: both
// ingresses pause their host, the hosts stop and resume, nothing is dropped
// with automatic headroom, and the buffer stays bounded by XOFF + headroom
// per ingress. The byte balance holds mid-run and at the end.
func TestPFCTwoSendersLosslessNoDrops(t *testing.T) {
	const n = 400
	const xoff, xon = 10 * mtuW, 5 * mtuW
	// pausedByLastGrant[h] is host h's paused time when it handed out its
	// last frame (pauses after that cannot stall it).
	var pausedByLastGrant [2]float64
	run := func(cfg *fabric.SwitchConfig, midRun bool) *bed {
		b := newStar(cfg, us, g400, g400, g400)
		b.hosts[0].queue(2, n, mtuW, 3)
		b.hosts[1].queue(2, n, mtuW, 3)
		b.s.StopPollEvery = 1
		pausedByLastGrant = [2]float64{-1, -1}
		b.s.StopHook = func(now sim.Time) bool {
			for i, h := range b.hosts[:2] {
				if h.sent == n && pausedByLastGrant[i] < 0 {
					pausedByLastGrant[i] = h.port.Counters(now).PFCPausedS
				}
			}
			return false
		}
		b.start()
		if midRun {
			b.s.Run(300 * t400)
			c := b.net.Balance()
			if !c.OK || c.InFlightBytes == 0 || c.DeliveredBytes == 0 {
				t.Fatalf("mid-run balance %+v", c)
			}
		}
		b.s.Run(-1)
		return b
	}
	b := run(pfcConfig(xoff, xon), true)
	if b.net.DroppedPackets != 0 {
		t.Fatalf("%d drops with PFC and auto headroom", b.net.DroppedPackets)
	}
	if got := len(b.hosts[2].got); got != 2*n {
		t.Fatalf("delivered %d of %d", got, 2*n)
	}
	end := b.s.Now()
	for i, h := range b.hosts[:2] {
		sent, recv := h.port.Peer.C.PFCPausesSent, h.port.C.PFCPausesRecv
		if sent == 0 || sent != recv {
			t.Errorf("%s: switch ingress sent %d pauses, host received %d", h.Name(), sent, recv)
		}
		paused := h.port.Counters(end).PFCPausedS
		if paused <= 0 || h.port.Paused(3) {
			t.Errorf("%s: paused %g s, still paused %v", h.Name(), paused, h.port.Paused(3))
		}
		if len(h.refusedAt) == 0 {
			t.Errorf("%s: feeder never refused for a pause", h.Name())
		}
		// The host stopped: its extra gaps between frames (beyond one frame
		// time) add up to the time it was paused before its last frame, less
		// at most one frame per pause (the one on its wire when the pause
		// arrived).
		var stalled sim.Time
		for k := 1; k < len(h.grants); k++ {
			stalled += h.grants[k] - h.grants[k-1] - t400
		}
		p := pausedByLastGrant[i]
		lo := p - float64(recv)*t400.Seconds()
		if s := stalled.Seconds(); s <= 0 || s > p+1e-15 || s < lo-1e-15 {
			t.Errorf("%s: stalled %g s, paused %g s before its last frame (%d pauses)", h.Name(), s, p, recv)
		}
	}
	bound := 2 * (xoff + fabric.AutoHeadroom(g400, us, mtuW))
	if b.sw.MaxUsed > bound || b.sw.MaxUsed <= xoff {
		t.Errorf("buffer peaked at %d B, want in (%d, %d]", b.sw.MaxUsed, xoff, bound)
	}
	b.checkEnd(t)

	// Without PFC action (XOFF out of reach) the same burst has no pauses
	// and queues far more.
	nb := run(pfcConfig(1<<40, 1<<39), false)
	if nb.hosts[0].port.C.PFCPausesRecv != 0 || nb.sw.MaxUsed <= bound {
		t.Errorf("no-PFC control: %d pauses, buffer peak %d B (PFC bound %d)", nb.hosts[0].port.C.PFCPausesRecv, nb.sw.MaxUsed, bound)
	}

	// Headroom far below a round trip of data: the lossless queue overflows.
	cfg := pfcConfig(xoff, xon)
	cfg.Headroom = mtuW
	hb := run(cfg, false)
	if hb.net.DroppedPackets == 0 {
		t.Errorf("no drops with headroom of one frame")
	}
	hb.checkEnd(t)
}

// Lossy with a 3-frame shared buffer: two 400G senders into one 400G
// output. At each arrival instant h0's frame is admitted first, then the
// egress dequeues, then h1's: once the buffer is full every h0 frame from
// the 4th on is dropped and every h1 frame fits (ties run in insertion
// order, so this is exact).
func TestLossyTinyBufferDropsClosedForm(t *testing.T) {
	const n = 300
	cfg := &fabric.SwitchConfig{Buffer: 3 * mtuW, MaxPacketWire: mtuW}
	b := newStar(cfg, us, g400, g400, g400)
	b.hosts[0].queue(2, n, mtuW, 3)
	b.hosts[1].queue(2, n, mtuW, 3)
	b.start()
	b.s.Run(us + 150*t400)
	c := b.net.Balance()
	if !c.OK || c.DroppedBytes == 0 || c.InFlightBytes == 0 || c.DeliveredBytes == 0 {
		t.Fatalf("mid-run balance %+v", c)
	}
	if b.net.Pool.Live*mtuW != c.InFlightBytes {
		t.Errorf("mid-run: %d live packets but %d B in flight", b.net.Pool.Live, c.InFlightBytes)
	}
	b.s.Run(-1)
	if b.net.DroppedPackets != n-3 || b.net.DroppedBytes != (n-3)*mtuW {
		t.Errorf("dropped %d packets (%d B), want %d", b.net.DroppedPackets, b.net.DroppedBytes, n-3)
	}
	if d0, d1 := b.hosts[0].port.Peer.C.Drops, b.hosts[1].port.Peer.C.Drops; d0 != n-3 || d1 != 0 {
		t.Errorf("ingress drops h0 %d h1 %d, want %d and 0", d0, d1, n-3)
	}
	if got := int64(len(b.hosts[2].got)); got != n+3 || got+b.net.DroppedPackets != b.net.InjectedPackets {
		t.Errorf("delivered %d, dropped %d, injected %d", got, b.net.DroppedPackets, b.net.InjectedPackets)
	}
	if b.sw.MaxUsed != 3*mtuW {
		t.Errorf("buffer peak %d B, want %d", b.sw.MaxUsed, 3*mtuW)
	}
	for _, pt := range b.net.Ports {
		if pt.C.PFCPausesSent+pt.C.PFCPausesRecv != 0 {
			t.Errorf("pause on a lossy fabric")
		}
	}
	b.checkEnd(t)
}

// FlowHash is a pure function of the tuple and seed, spreads tuples evenly
// and reshuffles them under another seed.
func TestFlowHashDeterministicAndSpread(t *testing.T) {
	const n, buckets = 10000, 8
	assign := func(seed uint64) []int {
		a := make([]int, n)
		for i := range a {
			src, dst, qp := int32(i%100), int32(i/100), int32(i*7)
			a[i] = int(fabric.FlowHash(src, dst, qp, qp+1, seed) % buckets)
		}
		return a
	}
	a, again, other := assign(42), assign(42), assign(43)
	var count [buckets]int
	diff := 0
	for i := range a {
		if a[i] != again[i] {
			t.Fatalf("tuple %d hashed to %d then %d", i, a[i], again[i])
		}
		count[a[i]]++
		if a[i] != other[i] {
			diff++
		}
	}
	for b, c := range count {
		if c < 1250-200 || c > 1250+200 {
			t.Errorf("bucket %d holds %d of %d tuples, want 1250±200", b, c, n)
		}
	}
	// Independent assignments differ for 7/8 of the tuples.
	if diff < n*3/4 {
		t.Errorf("seeds 42 and 43 agree on %d of %d tuples", n-diff, n)
	}
	// Each field matters.
	base := fabric.FlowHash(1, 2, 3, 4, 5)
	for _, h := range []uint64{fabric.FlowHash(9, 2, 3, 4, 5), fabric.FlowHash(1, 9, 3, 4, 5),
		fabric.FlowHash(1, 2, 9, 4, 5), fabric.FlowHash(1, 2, 3, 9, 5), fabric.FlowHash(2, 1, 4, 3, 5)} {
		if h == base {
			t.Errorf("changing a tuple field left the hash at %#x", h)
		}
	}
}

// A switch with two equal-cost links sends each QP down the link its
// FlowHash picks; switches get distinct seeds, and the same build gets the
// same ones.
func TestECMPFollowsFlowHash(t *testing.T) {
	build := func() (*sim.Scheduler, *fabric.Network, []*fabric.Switch, *fabric.Port, *fabric.Port, *testHost, *testHost) {
		s := sim.NewScheduler()
		net := fabric.NewNetwork(s, 1, 2)
		cfg := lossy()
		a, c := net.AddSwitch("a", "leaf", cfg, 99), net.AddSwitch("c", "leaf", cfg, 99)
		h0 := &testHost{id: 0, net: net, port: net.ConnectHost(0, a, g400, us)}
		h1 := &testHost{id: 1, net: net, port: net.ConnectHost(1, c, g400, us)}
		net.SetHost(0, h0, h0)
		net.SetHost(1, h1, h1)
		l1, _ := net.ConnectSwitches(a, c, g400, us)
		l2, _ := net.ConnectSwitches(a, c, g400, us)
		a.Next = [][]*fabric.Port{{h0.port.Peer}, {l1, l2}}
		c.Next = [][]*fabric.Port{nil, {h1.port.Peer}}
		return s, net, []*fabric.Switch{a, c}, l1, l2, h0, h1
	}
	s, net, sws, l1, l2, h0, h1 := build()
	if sws[0].HashSeed == sws[1].HashSeed {
		t.Errorf("two switches share hash seed %#x", sws[0].HashSeed)
	}
	if _, _, again, _, _, _, _ := build(); again[0].HashSeed != sws[0].HashSeed || again[1].HashSeed != sws[1].HashSeed {
		t.Errorf("rebuilding changed the hash seeds")
	}
	const n = 64
	want := [2]int64{}
	for qp := 0; qp < n; qp++ {
		h0.send = append(h0.send, fabric.Packet{Kind: fabric.Data, Prio: 3, Wire: mtuW, Src: 0, Dst: 1, SrcQP: int32(qp), DstQP: int32(100 + qp), PSN: int64(qp)})
		want[fabric.FlowHash(0, 1, int32(qp), int32(100+qp), sws[0].HashSeed)%2]++
	}
	h0.port.Kick()
	s.Run(-1)
	if l1.TxPackets() != want[0] || l2.TxPackets() != want[1] {
		t.Errorf("links carried %d and %d packets, FlowHash says %d and %d", l1.TxPackets(), l2.TxPackets(), want[0], want[1])
	}
	if want[0] == 0 || want[1] == 0 {
		t.Errorf("64 QPs all hashed to one link: %v", want)
	}
	if len(h1.got) != n || net.Balance().InFlightBytes != 0 || !net.Balance().OK {
		t.Errorf("delivered %d of %d, balance %+v", len(h1.got), n, net.Balance())
	}
	// A destination without a route is dropped and counted.
	p := net.Pool.Get()
	p.Dst, p.Wire = 5, 100
	sws[1].Receive(p, h1.port.Peer)
	if net.DroppedPackets != 1 || h1.port.Peer.C.Drops != 1 || net.Pool.Live != 0 {
		t.Errorf("unroutable packet: dropped %d, port drops %d, live %d", net.DroppedPackets, h1.port.Peer.C.Drops, net.Pool.Live)
	}
}

// Packets come back to the pool and are handed out again: a 1000-packet run
// touches only as many packets as are ever in flight at once.
func TestPoolReusesPackets(t *testing.T) {
	var pl fabric.Pool
	p := pl.Get()
	p.PSN, p.CE, p.Wire = 7, true, 99
	pl.Put(p)
	if q := pl.Get(); q != p || q.PSN != 0 || q.CE || q.Wire != 0 || pl.Live != 1 {
		t.Errorf("Get after Put: same=%v psn=%d ce=%v wire=%d live=%d", q == p, q.PSN, q.CE, q.Wire, pl.Live)
	}

	b := newStar(lossy(), us, g400, g400)
	const n = 1000
	h := b.hosts[0]
	h.ptrs = map[*fabric.Packet]bool{}
	h.queue(1, n, mtuW, 3)
	b.start()
	b.s.Run(-1)
	// ≈ 2 × 1 µs / 83.56 ns on the wires plus one per port being sent.
	if len(h.ptrs) > 40 || b.net.Pool.Allocated != int64(len(h.ptrs)) {
		t.Errorf("%d distinct packets (%d allocated) used for %d sends", len(h.ptrs), b.net.Pool.Allocated, n)
	}
	b.checkEnd(t)
}

// Control packets a NIC queues on its own port (ACKs, CNPs waiting behind
// data) have not entered the fabric yet; the balance must hold while they
// wait, or an interrupted run reports a conservation violation (a bug fixed
// in b7aaaaa; this guards it).
func TestBalanceWithControlPacketsQueuedInNIC(t *testing.T) {
	b := newStar(lossy(), us, g400, g400)
	h := b.hosts[0]
	for k := 0; k < 3; k++ {
		p := b.net.Pool.Get()
		p.Kind, p.Prio, p.Wire, p.Src, p.Dst, p.PSN = fabric.Ack, 6, 84, 0, 1, int64(k)
		h.port.Enqueue(p) // the first goes on the wire, two wait
	}
	b.checkBalance(t, "two ACKs queued in the NIC")
	if c := b.net.Balance(); c.InjectedBytes != 84 || c.InFlightBytes != 84 {
		t.Errorf("with one ACK on the wire and two queued: %+v", c)
	}
	b.s.Run(-1)
	if len(b.hosts[1].got) != 3 {
		t.Fatalf("delivered %d of 3", len(b.hosts[1].got))
	}
	b.checkEnd(t)
}

// ECN at dequeue marks a departing packet from the queue it leaves
// behind; at enqueue an arriving one from the queue it joins. Twenty
// packets arrive at once at an idle 400G port (KMin = 3000 B, KMax =
// 3001 B: marked exactly when more than 3 packets of 1000 B are counted):
// at enqueue packet k finds k−1 queued (the first goes straight out), so
// 5…19 are marked; at dequeue packet k leaves 19−k behind, so 1…15 are.
func TestECNMarkAtEnqueueOrDequeue(t *testing.T) {
	for _, tc := range []struct {
		dequeue bool
		lo, hi  int64
	}{{false, 5, 19}, {true, 1, 15}} {
		cfg := lossy()
		cfg.ECN, cfg.KMin, cfg.KMax, cfg.PMax, cfg.ECNAtDequeue = true, 3000, 3001, 1, tc.dequeue
		b := newStar(cfg, us, g400, g400)
		in := b.hosts[0].port.Peer
		for k := 0; k < 20; k++ {
			p := b.net.Pool.Get()
			p.Kind, p.Prio, p.Wire, p.Src, p.Dst, p.PSN = fabric.Data, 3, 1000, 0, 1, int64(k)
			b.sw.Receive(p, in)
		}
		b.s.Run(-1)
		for _, r := range b.hosts[1].got {
			if want := r.psn >= tc.lo && r.psn <= tc.hi; r.ce != want {
				t.Errorf("dequeue %v: packet %d marked %v, want %v", tc.dequeue, r.psn, r.ce, want)
			}
		}
		if got := b.hosts[1].got[0].ce; got {
			t.Errorf("dequeue %v: the first packet, sent into an empty queue, was marked", tc.dequeue)
		}
	}
}

// Dynamic PFC thresholds follow the free shared buffer: a 400G sender into
// a 100G output pauses when its ingress exceeds α × (shared − used) and
// resumes XOFF − XON below that. With one queue, used = ingress I, so with
// α = 1/2, XOFF − XON = 2 frames and a shared pool of S frames it pauses
// when I > (S + 1)/3 and resumes when I ≤ S/3 − 4/3: exactly as static
// thresholds at those levels. Twice the buffer, twice the levels.
func TestPFCDynamicThresholdsFollowFreeBuffer(t *testing.T) {
	const frames = 200
	const headroom = 30 * mtuW // per port; two lossless ingresses reserve 60 frames
	run := func(cfg *fabric.SwitchConfig) ([]sim.Time, int64) {
		b := newStar(cfg, us, g400, g100)
		h := b.hosts[0]
		h.queue(1, frames, mtuW, 3)
		b.start()
		b.s.Run(-1)
		if b.net.DroppedPackets != 0 || len(b.hosts[1].got) != frames {
			t.Fatalf("dropped %d, delivered %d", b.net.DroppedPackets, len(b.hosts[1].got))
		}
		return h.grants, h.port.Peer.C.PFCPausesSent
	}
	for _, shared := range []int64{36, 72} {
		dyn := pfcConfig(2*mtuW, 0)
		dyn.Buffer, dyn.Headroom = 60*mtuW+shared*mtuW, headroom
		dyn.PFCDynamic, dyn.PFCAlpha, dyn.PFCReserved = true, 0.5, mtuW
		// Static equivalents: pause above (S+1)/3 frames, resume at or below S/3 − 4/3.
		xoff := (2*(shared+1) + 1) * mtuW / 6 // between (S+1)/3 and the next frame
		xon := (2*shared - 8 - 1) * mtuW / 6  // between the last frame at or below S/3 − 4/3 and the next
		st := pfcConfig(xoff, xon)
		st.Buffer, st.Headroom = dyn.Buffer, headroom
		gd, pd := run(dyn)
		gs, ps := run(st)
		if pd == 0 || pd != ps {
			t.Fatalf("shared %d frames: %d pauses dynamic, %d static", shared, pd, ps)
		}
		for k := range gd {
			if gd[k] != gs[k] {
				t.Fatalf("shared %d frames: frame %d granted at %d ps dynamic, %d static", shared, k, gd[k], gs[k])
			}
		}
	}
	// The same static thresholds on twice the buffer pause exactly as
	// before; dynamic ones do not.
	a := pfcConfig(2*mtuW, 0)
	a.Buffer, a.Headroom, a.PFCDynamic, a.PFCAlpha, a.PFCReserved = 60*mtuW+36*mtuW, headroom, true, 0.5, mtuW
	bb := *a
	bb.Buffer = 60*mtuW + 72*mtuW
	ga, _ := run(a)
	gb, _ := run(&bb)
	same := true
	for k := range ga {
		same = same && ga[k] == gb[k]
	}
	if same {
		t.Error("dynamic thresholds paused the same on twice the free buffer")
	}
}

// With dynamic thresholds a queue that other queues' growth leaves above
// the (falling) threshold pauses at once, its headroom counted from there
// rather than from the new threshold: scripted arrivals at one instant put
// 10 frames on a 10G ingress (below the threshold then), 40 on a 400G one
// (which fill the shared pool and drop the threshold to its floor), then
// one more on the 10G ingress: it is paused and the frame is admitted
// into its headroom, not dropped.
func TestPFCDynamicThresholdFallingBelowAQueueDoesNotDrop(t *testing.T) {
	cfg := pfcConfig(2*mtuW, 0)
	cfg.Buffer = 2*fabric.AutoHeadroom(g400, us, mtuW) + fabric.AutoHeadroom(g100, us, mtuW) + 40*mtuW
	cfg.PFCDynamic, cfg.PFCAlpha, cfg.PFCReserved = true, 0.5, mtuW
	b := newStar(cfg, us, 10*units.Gbps, g400, g100)
	slow, fast := b.hosts[0].port.Peer, b.hosts[1].port.Peer
	send := func(in *fabric.Port, n int, src int32) {
		for k := 0; k < n; k++ {
			p := b.net.Pool.Get()
			p.Kind, p.Prio, p.Wire, p.Src, p.Dst, p.PSN = fabric.Data, 3, mtuW, src, 2, int64(k)
			b.sw.Receive(p, in)
		}
	}
	send(slow, 10, 0)
	if slow.C.PFCPausesSent != 0 {
		t.Fatal("the 10G ingress paused at 10 frames")
	}
	send(fast, 40, 1)
	send(slow, 1, 0)
	if b.net.DroppedPackets != 0 || slow.C.PFCPausesSent != 1 {
		t.Fatalf("dropped %d; the 10G ingress sent %d pauses", b.net.DroppedPackets, slow.C.PFCPausesSent)
	}
	b.s.Run(-1)
	if got := len(b.hosts[2].got); got != 51 {
		t.Errorf("delivered %d of 51", got)
	}
}

// probe records, when it runs, whether a port is busy.
type probe struct {
	pt  *fabric.Port
	got *[]bool
}

func (p probe) OnEvent(sim.Time, uint64) { *p.got = append(*p.got, p.pt.Busy()) }

// idle does nothing (it only takes insertion numbers and stays pending).
type idle struct{}

func (idle) OnEvent(sim.Time, uint64) {}

// A switch port with nothing queued behind its frame does not schedule the
// frame's end; it is busy until then and, at that very time, for the
// events inserted before the end was due to be (A) and idle for those
// after (B), exactly as with the event. When the scheduler renumbers its
// insertion numbers between the two (every insertion, here), the port
// schedules its end first and the order holds.
func TestUnscheduledFrameEndKeepsItsPlace(t *testing.T) {
	for _, renumber := range []bool{false, true} {
		b := newStar(lossy(), us, g400, g400)
		b.hosts[0].queue(1, 1, mtuW, 3)
		sp := b.sw.Next[1][0]   // the switch's port toward host 1
		end := t400 + us + t400 // its frame's end
		var got []bool
		for range 10 {
			b.s.At(end+5*us, idle{}, 0) // numbers before the frame's
		}
		b.s.At(end, probe{sp, &got}, 0) // A
		b.start()
		b.s.At(t400+us, handlerFunc(func(sim.Time) { // right after the switch took the packet
			if !sp.Busy() {
				t.Fatal("the switch port is not sending")
			}
			if renumber {
				b.s.RenumberAfter(1)
			}
			b.s.At(end, probe{sp, &got}, 0) // B
		}), 0)
		b.s.Run(-1)
		if len(got) != 2 || !got[0] || got[1] {
			t.Errorf("renumber %v: busy at the frame's end before and after its place: %v, want [true false]", renumber, got)
		}
		b.checkEnd(t)
	}
}

type handlerFunc func(now sim.Time)

func (f handlerFunc) OnEvent(now sim.Time, _ uint64) { f(now) }

// Between runs the port is what the events run so far left: busy until
// its frame's end, idle from a run stopped exactly there (the end it did
// not schedule counts as run, as the event would have).
func TestUnscheduledFrameEndBetweenRuns(t *testing.T) {
	b := newStar(lossy(), us, g400, g400)
	b.hosts[0].queue(1, 1, mtuW, 3)
	sp := b.sw.Next[1][0]
	end := t400 + us + t400
	b.start()
	b.s.Run(end - 1)
	if !sp.Busy() {
		t.Fatal("the switch port is idle before its frame's end")
	}
	b.s.Run(end)
	if sp.Busy() {
		t.Fatal("the switch port is busy after a run up to its frame's end")
	}
	b.s.Run(-1)
	b.checkEnd(t)
}

// A link that fails while a switch port sends a frame with nothing behind
// it (its end only reserved) still has that end come: the run goes on to
// it as when the end was an event, though the wire's pending arrival (an
// earlier, smaller frame's) comes sooner. Host 0 sends 64 B then a full
// frame over links of 100 ns; the switch starts the full frame at 184.84
// ns with the small one still on its wire (it arrives at 202.56 ns), the
// link fails at 190 ns, and the frame would have ended at 268.40 ns.
func TestFailedLinkKeepsReservedFrameEnd(t *testing.T) {
	const d = 100 * units.Nanosecond
	b := newStar(lossy(), d, g400, g400)
	b.hosts[0].queue(1, 1, 64, 3)
	b.hosts[0].queue(1, 1, mtuW, 3)
	sp := b.sw.Next[1][0]
	b.start()
	b.s.At(190*units.Nanosecond, handlerFunc(func(sim.Time) {
		if !sp.Busy() {
			t.Fatal("the switch port is not sending at 190 ns")
		}
		b.net.FailLink(sp)
	}), 0)
	end := b.s.Run(-1)
	if want := 1280 + d + t400 + t400; end != want { // 64 B at 400G is 1.28 ns
		t.Fatalf("the run ended at %d ps, want %d (the lost frame's end)", end, want)
	}
	if c := b.net.Balance(); !c.OK || b.net.DroppedPackets != 2 {
		t.Fatalf("conservation %+v, %d dropped, want 2", c, b.net.DroppedPackets)
	}
}

// A host port whose feeder is idle reserves its frame's end instead of
// scheduling it, and schedules it in its place when a packet is queued
// behind the frame or the feeder kicks the port: every packet goes and
// arrives exactly when it did with every end scheduled, the pauses too,
// and fewer events run. Two 400G senders into a 100G host pause under
// PFC; during a frame whose end may be reserved, one sender gets a packet
// more (added, then the port kicked, as a NIC's wake does) and the other
// has an ACK queued (as a NIC's control packet is).
func TestIdleFeederReservesFrameEnds(t *testing.T) {
	type outcome struct {
		got    [3][]rx
		grants [3][]sim.Time
		paused [3]float64
		end    sim.Time
		events uint64
	}
	run := func(idle bool) outcome {
		b := newStar(pfcConfig(10*mtuW, 5*mtuW), us, g400, g400, g100)
		for _, h := range b.hosts {
			h.idle = idle
		}
		b.hosts[0].queue(2, 40, mtuW, 3)
		b.hosts[1].queue(2, 25, mtuW, 3)
		kicked, acked := false, false
		for k := 1; k < 3000; k++ {
			b.s.At(sim.Time(k)*t400/3, handlerFunc(func(sim.Time) {
				h0, h1 := b.hosts[0], b.hosts[1]
				if !kicked && h0.sent == len(h0.send) && h0.port.Busy() {
					kicked = true
					h0.queue(2, 1, 64, 3)
					h0.port.Kick()
				}
				if !acked && h1.sent == len(h1.send) && h1.port.Busy() {
					acked = true
					p := b.net.Pool.Get()
					*p = fabric.Packet{Kind: fabric.Ack, Prio: 6, Wire: 84, Src: 1, Dst: 0}
					h1.port.Enqueue(p)
				}
			}), 0)
		}
		b.start()
		b.s.Run(-1)
		if !kicked || !acked {
			t.Fatalf("idle %v: kicked %v, acked %v: no frame was caught", idle, kicked, acked)
		}
		b.checkEnd(t)
		var o outcome
		for i, h := range b.hosts {
			o.got[i], o.grants[i] = h.got, h.grants
			o.paused[i] = h.port.Counters(b.s.Now()).PFCPausedS
		}
		o.end, o.events = b.s.Now(), b.s.Executed
		return o
	}
	always, reserved := run(false), run(true)
	if len(always.got[2]) != 66 || len(always.got[0]) != 1 || always.paused[0] == 0 {
		t.Fatalf("the scenario: %d packets to host 2, %d to host 0, host 0 paused %g s", len(always.got[2]), len(always.got[0]), always.paused[0])
	}
	if reserved.events >= always.events {
		t.Errorf("%d events with idle feeders, %d without: no frame end was reserved", reserved.events, always.events)
	}
	reserved.events = always.events
	if !reflect.DeepEqual(always, reserved) {
		t.Errorf("idle feeders changed the run:\n%+v\nagainst\n%+v", reserved, always)
	}
}
