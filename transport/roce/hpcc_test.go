package roce

import (
	"math"
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

// hop is one INT record of a one-hop path at a 100G port.
func hop(q, tx int64, at sim.Time) *fabric.INTRecord {
	r := &fabric.INTRecord{N: 1}
	r.Hops[0] = fabric.INTHop{QueueBytes: q, TxBytes: tx, At: at, Rate: 100 * units.Gbps}
	return r
}

func hpccParams() *HPCCParams {
	return &HPCCParams{Enabled: true, Eta: 0.95, MaxStage: 5, RateAI: 50 * units.Mbps, MinRate: 100 * units.Mbps}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// The first ACK only records; a link at 100% with no queue, measured over
// a whole T, gives U = 1 and the multiplicative step R = Rc·η/U + AI.
func TestHPCCFullLinkCutsToEta(t *testing.T) {
	const T = 10 * units.Microsecond
	var h HPCC
	h.Init(hpccParams(), 100*units.Gbps, T)
	if h.OnAck(1, 10, hop(0, 0, 0)) {
		t.Error("the first ACK changed the rate")
	}
	if h.Rate() != 100*units.Gbps || h.Window() != 125000 {
		t.Errorf("before any update: rate %v window %d, want line rate and the BDP 125000 B", h.Rate(), h.Window())
	}
	// 10 µs at 100G carry 125,000 bytes: txRate = B exactly.
	if !h.OnAck(11, 20, hop(0, 125000, T)) {
		t.Error("the update did not change the rate")
	}
	near(t, "U", h.Utilisation(), 1)
	near(t, "R", float64(h.Rate()), 100e9*0.95+50e6)
	if h.Stage() != 0 {
		t.Errorf("stage %d after a multiplicative step", h.Stage())
	}
}

// The queue term: min(q, q') normalised by B·T, added to the link's
// utilisation; τ < T weighs the new sample by τ/T.
func TestHPCCQueueAndEWMA(t *testing.T) {
	const T = 10 * units.Microsecond
	var h HPCC
	h.Init(hpccParams(), 100*units.Gbps, T)
	h.OnAck(1, 10, hop(50000, 0, 0))
	// 5 µs later: 50,000 bytes sent (80% of the line), queue 25,000 B.
	h.OnAck(11, 20, hop(25000, 50000, 5*units.Microsecond))
	u := 25000*8/(100e9*10e-6) + 50000*8/5e-6/100e9 // 0.2 + 0.8
	wantU := 1*(1-0.5) + u*0.5
	near(t, "U", h.Utilisation(), wantU)
	near(t, "R", float64(h.Rate()), 100e9/(wantU/0.95)+50e6)
}

// Below η the rate grows by AI per round trip from the reference rate;
// ACKs inside the round trip compute from the same Rc (no compounding),
// and after MaxStage additive steps a multiplicative one lifts the rate
// towards η.
func TestHPCCAdditiveStagesOncePerRTT(t *testing.T) {
	const T = 10 * units.Microsecond
	p := hpccParams()
	var h HPCC
	h.Init(p, 100*units.Gbps, T)
	h.rate, h.rc = 40e9, 40e9 // as after a cut
	h.OnAck(1, 10, hop(0, 0, 0))
	tx, at := int64(0), sim.Time(0)
	step := func(psn, nxt int64) {
		// Each ACK a whole T apart at 40% of the line: U settles at 0.4.
		tx += 50000
		at += T
		h.OnAck(psn, nxt, hop(0, tx, at))
	}
	step(11, 20) // full update: Rc = 40G + AI, stage 1
	near(t, "R after stage 1", float64(h.Rate()), 40e9+50e6)
	step(15, 20) // inside the round trip: from the same Rc
	near(t, "R inside the RTT", float64(h.Rate()), 40e9+2*50e6)
	if h.Stage() != 1 {
		t.Errorf("stage %d inside the round trip, want 1", h.Stage())
	}
	near(t, "Rc", h.rc, 40e9+50e6)
	for psn := int64(21); h.Stage() < p.MaxStage; psn += 10 {
		step(psn, psn+9)
	}
	rc := h.rc
	near(t, "Rc after MaxStage additive steps", rc, 40e9+5*50e6)
	step(100, 110) // stage = MaxStage: multiplicative
	near(t, "R", float64(h.Rate()), rc/(0.4/0.95)+50e6)
	if h.Stage() != 0 {
		t.Errorf("stage %d after the multiplicative step", h.Stage())
	}
}

// The rate stays in [MinRate, line]; a rerouted ACK (another hop count)
// and an ACK stamped at the same time as the last only record.
func TestHPCCBoundsAndReroutes(t *testing.T) {
	const T = 10 * units.Microsecond
	var h HPCC
	h.Init(hpccParams(), 100*units.Gbps, T)
	h.OnAck(1, 10, hop(1<<40, 0, 0))
	// An enormous queue (at both ACKs: the term is their minimum): the
	// cut is floored at MinRate.
	h.OnAck(11, 20, hop(1<<40, 125000, T))
	if h.OnAck(12, 20, hop(1<<40, 125000, T)) {
		t.Error("an ACK stamped at the same time changed the rate")
	}
	if h.Rate() > 100*units.Mbps+50*units.Mbps || h.Rate() < 100*units.Mbps {
		t.Errorf("rate %v, want the floor", h.Rate())
	}
	two := &fabric.INTRecord{N: 2}
	if h.OnAck(21, 30, two) {
		t.Error("a rerouted ACK changed the rate")
	}
	// The same number of hops through another port is a new path too:
	// its counters are not comparable.
	other := hop(0, 1<<40, 3*T)
	other.Hops[0].Port = 9
	h.OnAck(31, 40, hop(0, 0, 2*T))
	if h.OnAck(41, 50, other) {
		t.Error("an ACK from another port changed the rate")
	}
	// An idle path: U decays towards 0 and the rate returns to the line,
	// never above it.
	h.Init(hpccParams(), 100*units.Gbps, T)
	h.OnAck(1, 10, hop(0, 0, 0))
	for i := int64(1); i < 40; i++ {
		h.OnAck(10*i+1, 10*i+10, hop(0, 0, sim.Time(i)*T))
	}
	if h.Rate() != 100*units.Gbps {
		t.Errorf("idle path: rate %v, want the line rate", h.Rate())
	}
}

// The sender obeys HPCC's window R·T and paces at R.
func TestSenderHPCCWindowAndPacing(t *testing.T) {
	cfg := &Config{MTU: 1000, Overhead: 0, HPCC: *hpccParams()}
	cfg.HPCC.BaseRTT = 8 * units.Microsecond // BDP at 100G: 100,000 B = 100 packets
	s := NewSender(cfg, 100*units.Gbps)
	s.Post(1, 1<<20)
	n := 0
	for s.CanSend() {
		s.Next(0)
		n++
	}
	if n != 100 {
		t.Errorf("sent %d packets before the window closed, want 100", n)
	}
	s.hp.rate = 50e9
	if s.CanSend() {
		t.Error("the window did not shrink with the rate")
	}
	s.OnAck(1, 60) // 40 in flight < 50
	if !s.CanSend() {
		t.Error("the window did not open after an ACK")
	}
	s.Next(2 * units.Microsecond)
	if got, want := s.SendAt(), 2*units.Microsecond+160*units.Nanosecond; got != want {
		t.Errorf("paced at %v, want %v (1000 B at 50G)", got, want)
	}
}
