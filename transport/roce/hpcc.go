package roce

import (
	"fabriclab/fabric"
	"fabriclab/sim"
	"fabriclab/units"
)

// HPCCParams are the knobs of HPCC (Li et al., "HPCC: High Precision
// Congestion Control", SIGCOMM 2019), the sender-side alternative to
// DCQCN that reads in-band telemetry (INT) the switches stamp on every
// data packet. See the README's "HPCC" section for defaults.
type HPCCParams struct {
	// Enabled selects HPCC instead of DCQCN (transport.cc: hpcc).
	Enabled bool
	// Eta is the target utilisation η of the most loaded link (0.95).
	Eta float64
	// MaxStage is how many additive-increase updates run before a
	// multiplicative one, while the path is below η (maxStage, 5).
	MaxStage int
	// RateAI is the additive increase W_AI/T of one update.
	RateAI units.Rate
	// MinRate is the floor of the rate.
	MinRate units.Rate
	// BaseRTT is T, the base round-trip time the window is measured
	// against; 0 = each QP's own unloaded RTT, from its path.
	BaseRTT sim.Time
}

// HPCC is one queue pair's HPCC state, a pure state machine like the
// DCQCN reaction point: the NIC feeds it the INT records its ACKs echo
// and paces the QP at Rate, with Window bytes in flight at most.
//
//	h.Init(&params, lineRate, baseRTT)
//	h.OnAck(psn, sndNxt, rec)  // an ACK for psn echoing the telemetry rec
//	h.Rate(); h.Window()
//
// # The control law (the paper's Algorithm 1, rate form)
//
// R = W/T throughout, so the window is R·T. The first ACK only records
// its hops. Each later ACK compares every hop i with the same hop of the
// previous ACK: over τᵢ = tsᵢ − ts'ᵢ the link carried txRateᵢ = (txBytesᵢ
// − txBytes'ᵢ)·8/τᵢ, and its normalised in-flight bytes are
//
//	uᵢ = min(qlenᵢ, qlen'ᵢ)·8/(Bᵢ·T) + txRateᵢ/Bᵢ
//
// The most loaded hop (largest uᵢ, with its τ) feeds the estimate U ←
// U·(1 − τ/T) + uᵢ·τ/T, τ capped at T (U starts at 1). Then, with Rc the
// reference rate,
//
//	U/η ≥ 1 or stage ≥ MaxStage:  R = Rc/(U/η) + RateAI, stage 0
//	else:                         R = Rc + RateAI,       stage + 1
//
// bounded to [MinRate, line rate]. Rc and stage take the new values only
// once per round trip: on the first ACK beyond the sequence number that
// was next to send at the previous such update; the ACKs in between set
// R from the same Rc (the paper's fast reaction). An ACK whose path has a
// different number of hops than the previous one (a reroute) only
// records its hops, as does one whose hops are other ports (a new path:
// flowlets, adaptive routing). Nothing allocates.
type HPCC struct {
	p     *HPCCParams
	line  float64 // bits per second
	t     float64 // T in seconds
	rate  float64 // R
	rc    float64 // Rc
	u     float64 // U
	stage int
	// lastUpdate: the next PSN to send at the last full update; an ACK
	// beyond it starts the next round trip's update.
	lastUpdate int64
	started    bool
	prev       [fabric.MaxINTHops]fabric.INTHop
	nprev      int
}

// Init (re)initialises h at line rate with base RTT t.
func (h *HPCC) Init(p *HPCCParams, line units.Rate, t sim.Time) {
	// A zero T (a path without hops) would make U undefined: a picosecond
	// keeps it a number.
	*h = HPCC{p: p, line: float64(line), rate: float64(line), rc: float64(line), u: 1, t: max(t, 1).Seconds()}
}

// Rate is the rate to pace the QP at.
func (h *HPCC) Rate() units.Rate { return units.Rate(h.rate) }

// Window is how many bytes may be unacknowledged: R·T (at least one byte,
// so a QP is never shut).
func (h *HPCC) Window() int64 { return max(int64(h.rate*h.t/8), 1) }

// Utilisation is U, the estimate of the most loaded link's utilisation.
func (h *HPCC) Utilisation() float64 { return h.u }

// Stage is the additive-increase stage (Rc's updates since the last
// multiplicative one).
func (h *HPCC) Stage() int { return h.stage }

// OnAck handles an ACK for psn (every PSN below it arrived) that echoes
// the telemetry rec of a data packet; sndNxt is the next PSN the sender
// would send. It reports whether the rate changed.
func (h *HPCC) OnAck(psn, sndNxt int64, rec *fabric.INTRecord) bool {
	if !h.started || !h.samePath(rec) {
		if !h.started {
			h.started = true
			h.lastUpdate = sndNxt
		}
		h.remember(rec)
		return false
	}
	var worst, tau float64
	seen := false
	for i := 0; i < rec.N; i++ {
		a, b := &rec.Hops[i], &h.prev[i]
		dt := (a.At - b.At).Seconds()
		if dt <= 0 || a.Rate <= 0 || a.TxBytes < b.TxBytes {
			continue // the same packet's hop, or one stamped out of order
		}
		bw := float64(a.Rate)
		u := float64(min(a.QueueBytes, b.QueueBytes))*8/(bw*h.t) + float64(a.TxBytes-b.TxBytes)*8/dt/bw
		if !seen || u > worst {
			worst, tau, seen = u, dt, true
		}
	}
	h.remember(rec)
	if !seen {
		return false
	}
	tau = min(tau, h.t)
	h.u = (h.u*(h.t-tau) + worst*tau) / h.t
	full := psn > h.lastUpdate
	c := h.u / h.p.Eta
	var r float64
	stage := h.stage
	if c >= 1 || h.stage >= h.p.MaxStage {
		r, stage = h.rc/c+float64(h.p.RateAI), 0
	} else {
		r, stage = h.rc+float64(h.p.RateAI), h.stage+1
	}
	r = min(max(r, float64(h.p.MinRate)), h.line)
	changed := r != h.rate
	h.rate = r
	if full {
		h.rc, h.stage = r, stage
		h.lastUpdate = max(h.lastUpdate, sndNxt)
	}
	return changed
}

// samePath reports whether rec crossed the ports of the previous record.
func (h *HPCC) samePath(rec *fabric.INTRecord) bool {
	if rec.N != h.nprev {
		return false
	}
	for i := 0; i < rec.N; i++ {
		if rec.Hops[i].Port != h.prev[i].Port {
			return false
		}
	}
	return true
}

func (h *HPCC) remember(rec *fabric.INTRecord) {
	h.nprev = rec.N
	copy(h.prev[:], rec.Hops[:rec.N])
}
