package roce

import (
	"math"

	"fabriclab/units"
)

// NoDeadline is what NextDeadline returns when no timer is armed. It is the
// largest Duration, so min(deadline, other) needs no special case.
const NoDeadline units.Duration = math.MaxInt64

// ReactionPoint is the DCQCN reaction point (the sender side) of one queue
// pair, written as a pure state machine in the style of etcd's raft: it owns
// no timers and does no I/O. The caller feeds it inputs stamped with the
// current simulated time and reads back the rate:
//
//	rp.Init(params, lineRate)       // or NewReactionPoint
//	rp.OnCNP(now)                   // a CNP arrived for this QP
//	rp.OnSent(now, bytes)           // bytes were put on the wire
//	rp.Advance(now)                 // run every timer whose deadline ≤ now
//	rp.Rate()                       // pace the next packet at this rate
//	rp.NextDeadline()               // schedule ONE wake-up event at this time
//
// Every input first runs Advance(now), so the caller may deliver inputs and
// timer wake-ups in any order at equal times, and extra Advance calls never
// change the outcome. Times must not go backwards; an earlier time than one
// already seen is treated as the latest time seen. Nothing allocates.
//
// # States
//
// A QP starts unlimited: it sends at line rate, no timer is armed
// (NextDeadline returns NoDeadline) and OnSent/Advance cost nothing. The
// first CNP engages the rate limiter and starts an episode; when the current
// rate climbs back to line rate the limiter is released and the QP is
// unlimited again (the NIC frees its per-flow rate limiter then). The next
// CNP starts a new episode from scratch, with α = InitialAlpha. With
// Enabled=false every input is ignored and Rate is always the line rate.
//
// # Rate decrease (the Mellanox/NVIDIA structure)
//
// The first CNP of an episode sets α = InitialAlpha and acts at once: if
// RateOnFirstCNP > 0 the current rate RC becomes that rate (at the line rate
// it stays there, and the episode still runs until the first increase event,
// so that later CNPs cut), otherwise RC is cut as below; the target RT is the
// line rate. It also anchors two grids at its
// time t0: alpha ticks at t0+k·AlphaInterval and rate-decrease checks at
// t0+k·DecreaseInterval (k ≥ 1).
//
// A later CNP only raises two flags. At the next decrease check a raised
// flag causes exactly one cut, however many CNPs arrived (coalescing); with
// DecreaseInterval = 0 every CNP cuts at once. A cut is
//
//	if clamp { RT ← RC }
//	RC ← max(MinRate, RC · max(1 − α·DecreaseCoefficient, 1 − MinDecreaseFactor))
//
// (DecreaseCoefficient = 0.5 in every preset: the classic cut by α/2)
//
// followed by a reset of the increase stages (T = BC = 0, byte count 0,
// increase timer restarted). The clamp rule follows the NIC's knobs:
// clamp = ClampTargetRate, or a byte-counter increase happened since the last
// cut, or (ClampAfterTimeInc and a timer increase happened since the last
// cut). So back-to-back cuts with no recovery in between keep the target at
// the rate before the congestion (the NIC default), while cuts that
// interrupt a recovery pull the target down to the current rate.
//
// At each alpha tick α ← α·g + (1−g) if a CNP (other than the episode's first)
// arrived since the previous tick, else α ← α·g (g = AlphaG). A tick and a
// check due at the same time run alpha first, then the check. Inputs at a
// time equal to a deadline are applied after that deadline's timer: a CNP at
// exactly a tick counts for the next period.
//
// # Rate increase
//
// After a cut the increase timer fires every IncreaseInterval (T += 1) and
// every ByteCounter bytes reported by OnSent count one byte event (BC += 1;
// the remainder carries over, so chunking of OnSent does not matter;
// ByteCounter = 0 disables the byte counter and BC then mirrors T). After each
// event, with F = Threshold:
//
//	max(T, BC) ≤ F   fast recovery    RC ← (RT + RC)/2
//	min(T, BC) > F   hyper increase   RT ← RT + HAIRate; RC ← (RT + RC)/2
//	otherwise        additive         RT ← RT + AIRate;  RC ← (RT + RC)/2
//
// RT is capped at the line rate and the halving rounds up, so RC reaches RT
// exactly in finitely many steps. F therefore counts fast-recovery events.
// Hyper increase adds one HAIRate per event, as NVIDIA documents
// rpg_hai_rate and as the Mellanox model of the HPCC ns-3 simulator does; the
// DCQCN paper's QCN-style growing step i·R_HAI is not modelled. When RC reaches the line rate the
// limiter is released (see States).
//
// Rates are integers (bits/s); α is a float64 updated with explicit rounding
// after every operation, so results are bit-identical on every platform.
type ReactionPoint struct {
	line units.Rate

	limited bool           // rate limiter engaged (an episode is running)
	last    units.Duration // latest time seen

	rc, rt units.Rate
	alpha  float64

	alphaNext  units.Duration // next alpha tick
	alphaFlag  bool           // CNP since the previous alpha tick
	anchor     units.Duration // t0 of the episode: the decrease-check grid
	decPending bool           // CNP since the previous check
	decAt      units.Duration // next check when decPending

	incAt  units.Duration // next increase-timer expiry (NoDeadline if off)
	tStage int            // T: timer events since the last cut
	bStage int            // BC: byte-counter events since the last cut
	bytes  units.Size     // bytes towards the next byte-counter event

	cuts, increases uint64

	// With KeepAlpha: an episode ended (released) before, and α's next
	// tick then.
	ended     bool
	idleAlpha units.Duration

	p *DCQCNParams // capped for the line rate (ForLine); shared by a NIC's QPs
}

// NewReactionPoint returns a reaction point for a QP on a link of lineRate.
func NewReactionPoint(p DCQCNParams, lineRate units.Rate) *ReactionPoint {
	r := new(ReactionPoint)
	r.Init(p, lineRate)
	return r
}

// Init (re)initialises r in place, so a QP can embed a ReactionPoint by
// value. MinRate and RateOnFirstCNP above the line rate are capped to it.
// r keeps its own copy of the capped parameters; InitShared shares one.
func (r *ReactionPoint) Init(p DCQCNParams, lineRate units.Rate) {
	lineRate = max(lineRate, 0)
	own := p.ForLine(lineRate)
	r.init(&own, lineRate)
}

// InitShared is Init with parameters that ForLine(lineRate) made, which
// every reaction point on such a link may share: a NIC's QPs then point
// at one copy instead of carrying 136 bytes each. It panics if p is not
// what ForLine gives (a caller's bug, not an input's).
func (r *ReactionPoint) InitShared(p *DCQCNParams, lineRate units.Rate) {
	lineRate = max(lineRate, 0)
	if *p != p.ForLine(lineRate) {
		panic("roce: InitShared with parameters not capped for the line rate")
	}
	r.init(p, lineRate)
}

func (r *ReactionPoint) init(p *DCQCNParams, lineRate units.Rate) {
	*r = ReactionPoint{p: p, line: lineRate, rc: lineRate, rt: lineRate, alpha: p.InitialAlpha, incAt: NoDeadline}
}

// ForLine is p as a reaction point on a link of lineRate (≥ 0) runs it:
// MinRate and RateOnFirstCNP capped to the line rate, MinRate at least 0.
func (p DCQCNParams) ForLine(lineRate units.Rate) DCQCNParams {
	p.MinRate = min(max(p.MinRate, 0), lineRate)
	p.RateOnFirstCNP = min(p.RateOnFirstCNP, lineRate)
	return p
}

// Params returns the parameters r runs with (after Init's capping).
func (r *ReactionPoint) Params() DCQCNParams { return *r.p }

// LineRate is the rate of the QP's link.
func (r *ReactionPoint) LineRate() units.Rate { return r.line }

// Rate is the current sending rate RC.
func (r *ReactionPoint) Rate() units.Rate { return r.rc }

// Target is the target rate RT.
func (r *ReactionPoint) Target() units.Rate { return r.rt }

// Alpha is α as of the latest time passed to any input.
func (r *ReactionPoint) Alpha() float64 { return r.alpha }

// Limited reports whether the rate limiter is engaged (an episode started by
// a CNP is running and the rate is below line rate or recovering).
func (r *ReactionPoint) Limited() bool { return r.limited }

// Stages returns the increase stage counters T and BC since the last cut.
func (r *ReactionPoint) Stages() (timer, bytes int) { return r.tStage, r.bStage }

// Cuts counts rate decreases so far (a RateOnFirstCNP drop below the
// current rate counts as one).
func (r *ReactionPoint) Cuts() uint64 { return r.cuts }

// Increases counts rate-increase events (timer and byte counter) so far.
func (r *ReactionPoint) Increases() uint64 { return r.increases }

// NextDeadline is the earliest time at which Advance has work to do, or
// NoDeadline when nothing is armed. Alpha ticks are applied lazily (they only
// matter at a decrease check) and never appear here, so an unlimited QP, or a
// limited one between increase events, needs one scheduled event at most.
func (r *ReactionPoint) NextDeadline() units.Duration {
	if !r.limited {
		return NoDeadline
	}
	d := r.incAt
	if r.decPending && r.decAt < d {
		d = r.decAt
	}
	return d
}

// Advance runs, in time order, every timer whose deadline is ≤ now: alpha
// ticks, the rate-decrease check and the rate-increase timer.
func (r *ReactionPoint) Advance(now units.Duration) {
	if !r.limited {
		if now > r.last {
			r.last = now
		}
		return
	}
	if now < r.last {
		now = r.last
	}
	for r.limited {
		if r.decPending && r.decAt <= now && r.decAt <= r.incAt {
			at := r.decAt
			r.tickAlpha(at)
			r.cut(at)
			continue
		}
		if r.incAt <= now {
			at := r.incAt
			r.tickAlpha(at)
			r.tStage++
			r.incAt = r.after(at, r.p.IncreaseInterval)
			r.increase()
			continue
		}
		break
	}
	if r.limited {
		r.tickAlpha(now)
	}
	r.last = now
}

// OnCNP handles a congestion notification packet that arrived at now.
func (r *ReactionPoint) OnCNP(now units.Duration) {
	if !r.p.Enabled {
		return
	}
	if !r.limited {
		if now < r.last {
			now = r.last
		}
		r.last = now
		r.begin(now)
		if r.p.FirstCutAtCheck && r.p.RateOnFirstCNP <= 0 && r.p.DecreaseInterval > 0 {
			// The cut waits for the episode's first check.
			r.decPending, r.decAt = true, now+r.p.DecreaseInterval
			return
		}
		if r.p.RateOnFirstCNP > 0 {
			if rate := max(r.p.RateOnFirstCNP, r.p.MinRate); rate < r.rc {
				r.rc = rate
				r.cuts++
			}
			// The episode runs even when that rate is the line rate: the
			// limiter stays engaged until an increase event finds RC at
			// line rate, so the CNPs that follow cut. (Releasing it here
			// made every CNP a first one, and DCQCN never cut.)
			r.resetIncrease(now)
		} else {
			r.cut(now)
		}
		return
	}
	r.Advance(now)
	if !r.limited { // a timer due by now brought RC back to line rate
		r.OnCNP(now)
		return
	}
	now = r.last
	r.alphaFlag = true
	if r.p.DecreaseInterval <= 0 {
		r.cut(now)
		return
	}
	if !r.decPending {
		d := r.p.DecreaseInterval
		r.decPending = true
		r.decAt = r.anchor + ((now-r.anchor)/d+1)*d
	}
}

// OnSent reports bytes put on the wire at now; it drives the byte counter.
func (r *ReactionPoint) OnSent(now units.Duration, bytes units.Size) {
	if !r.limited {
		return
	}
	r.Advance(now)
	bc := r.p.ByteCounter
	if !r.limited || bc <= 0 || bytes <= 0 {
		return
	}
	r.bytes += bytes
	for r.limited && r.bytes >= bc {
		r.bytes -= bc
		r.bStage++
		r.increase()
	}
}

// begin starts an episode at now: the limiter engages, α is reset and the
// alpha and decrease grids are anchored at now.
func (r *ReactionPoint) begin(now units.Duration) {
	r.limited = true
	r.rc, r.rt = r.line, r.line
	switch {
	case r.p.KeepAlpha && r.ended:
		// α went on decaying, one × g per alpha interval, since the last
		// episode's last tick.
		if a := r.p.AlphaInterval; a > 0 && now >= r.idleAlpha {
			r.alpha = float64(r.alpha * powInt(r.p.AlphaG, uint64((now-r.idleAlpha)/a)+1))
		}
	default:
		r.alpha = r.p.InitialAlpha
	}
	r.alphaFlag = false
	r.alphaNext = r.after(now, r.p.AlphaInterval)
	r.anchor = now
	r.decPending = false
}

// cut is one rate decrease at now (see the type's doc).
func (r *ReactionPoint) cut(now units.Duration) {
	clamp := r.p.ClampTargetRate ||
		(r.bStage > 0 && r.p.ByteCounter > 0) ||
		(r.p.ClampAfterTimeInc && r.tStage > 0)
	if clamp {
		r.rt = r.rc
	}
	f := 1 - float64(r.alpha*r.p.DecreaseCoefficient) // no fused multiply-add: same bits everywhere
	if floor := 1 - r.p.MinDecreaseFactor; f < floor {
		f = floor
	}
	if f > 1 {
		f = 1
	}
	if f < 0 {
		f = 0
	}
	r.rc = max(units.Rate(float64(r.rc)*f), r.p.MinRate)
	r.decPending = false
	r.cuts++
	r.resetIncrease(now)
}

func (r *ReactionPoint) resetIncrease(now units.Duration) {
	r.tStage, r.bStage, r.bytes = 0, 0, 0
	r.incAt = r.after(now, r.p.IncreaseInterval)
}

// increase is one increase event; the caller has already bumped T or BC.
func (r *ReactionPoint) increase() {
	r.increases++
	t, b := r.tStage, r.bStage
	if r.p.ByteCounter <= 0 {
		b = t
		if r.p.ByteStagesOff {
			b = 0
		}
	}
	f := r.p.Threshold
	switch {
	case max(t, b) <= f: // fast recovery: RT unchanged
	case min(t, b) > f:
		r.rt = addCapped(r.rt, r.p.HAIRate, r.line)
	default:
		r.rt = addCapped(r.rt, r.p.AIRate, r.line)
	}
	if gap := r.rt - r.rc; gap > 0 {
		r.rc += gap - gap/2 // rounds the half up
	}
	r.releaseIfAtLine()
}

// releaseIfAtLine ends the episode when RC is back at line rate.
func (r *ReactionPoint) releaseIfAtLine() {
	if r.rc < r.line {
		return
	}
	r.rc, r.rt = r.line, r.line
	r.limited = false
	r.decPending = false
	r.alphaFlag = false
	r.ended, r.idleAlpha = true, r.alphaNext
	r.incAt = NoDeadline
	r.tStage, r.bStage, r.bytes = 0, 0, 0
}

// tickAlpha applies every alpha tick due at or before t.
func (r *ReactionPoint) tickAlpha(t units.Duration) {
	a := r.p.AlphaInterval
	if a <= 0 {
		return
	}
	g := r.p.AlphaG
	for r.alphaNext <= t {
		if r.alphaFlag {
			r.alpha = float64(r.alpha*g) + (1 - g)
			r.alphaFlag = false
		} else {
			r.alpha = float64(r.alpha * g)
		}
		r.alphaNext += a
	}
}

// after is now+d, or NoDeadline for a disabled (non-positive) interval.
func (r *ReactionPoint) after(now, d units.Duration) units.Duration {
	if d <= 0 {
		return NoDeadline
	}
	return now + d
}

// powInt is x^n by squaring: float64 products only, so the same bits on
// every platform.
func powInt(x float64, n uint64) float64 {
	out := 1.0
	for n > 0 {
		if n&1 == 1 {
			out = float64(out * x)
		}
		x = float64(x * x)
		n >>= 1
	}
	return out
}

func addCapped(x, d, limit units.Rate) units.Rate {
	if d > limit-x {
		return limit
	}
	return x + d
}
