package roce

// Tests of the DCQCN reaction point, named after the claim they check (in
// the spirit of etcd's raft_paper_test.go). Expected rates are exact integers
// worked out by hand from the rules in ReactionPoint's doc comment.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"fabriclab/units"
)

const line400 = 400 * units.Gbps

const us = units.Microsecond

func mustPreset(t testing.TB, name string) DCQCNParams {
	t.Helper()
	p, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// inEpisode returns a reaction point as it is right after a cut at time now
// that left RC = rc and RT = rt (α = InitialAlpha, stages reset, increase
// timer armed). It lets tests start from round numbers.
func inEpisode(p DCQCNParams, line units.Rate, now units.Duration, rc, rt units.Rate) *ReactionPoint {
	r := NewReactionPoint(p, line)
	r.begin(now)
	r.rc, r.rt = rc, rt
	r.resetIncrease(now)
	r.last = now
	return r
}

func wantRates(t *testing.T, step string, r *ReactionPoint, rc, rt units.Rate) {
	t.Helper()
	if r.Rate() != rc || r.Target() != rt {
		t.Fatalf("%s: RC, RT = %d, %d; want %d, %d", step, r.Rate(), r.Target(), rc, rt)
	}
}

// sendBackToBack plays a QP that always has data: it puts pkt-byte packets on
// the wire back to back at the current rate, reports each with OnSent, and
// wakes the reaction point at its deadlines. It stops when done() is true or
// at until, and returns the time reached.
func sendBackToBack(r *ReactionPoint, from, until units.Duration, pkt units.Size, done func() bool) units.Duration {
	now, next := from, from
	for now < until && !done() {
		if d := r.NextDeadline(); d < next {
			now = d
			r.Advance(now)
			continue
		}
		now = next
		r.OnSent(now, pkt)
		next = now + units.SerializationTime(pkt, r.Rate())
	}
	return now
}

func TestNoCNPStaysAtLineRateAndArmsNoTimer(t *testing.T) {
	r := NewReactionPoint(mustPreset(t, "default"), line400)
	for i := range 1000 {
		now := units.Duration(i) * us
		r.OnSent(now, 1<<20)
		r.Advance(now)
	}
	wantRates(t, "after 1 ms of traffic", r, line400, line400)
	if r.NextDeadline() != NoDeadline || r.Limited() || r.Increases() != 0 {
		t.Fatalf("idle QP: deadline %v limited %v increases %d", r.NextDeadline(), r.Limited(), r.Increases())
	}
}

func TestDisabledIgnoresEveryInput(t *testing.T) {
	r := NewReactionPoint(mustPreset(t, "off"), line400)
	for i := range 100 {
		now := units.Duration(i) * us
		r.OnCNP(now)
		r.OnSent(now, 1<<20)
		r.Advance(now)
	}
	wantRates(t, "off", r, line400, line400)
	if r.NextDeadline() != NoDeadline || r.Limited() || r.Cuts() != 0 {
		t.Fatal("a disabled reaction point reacted")
	}
}

// The first CNP engages the limiter and cuts at once with α = InitialAlpha:
// 400G · (1 − (1023/1024)/2) = 400G · 1025/2048 = 200.1953125G.
func TestFirstCNPCutsAtOnceByHalfOfInitialAlpha(t *testing.T) {
	r := NewReactionPoint(mustPreset(t, "default"), line400)
	r.OnCNP(7 * us)
	wantRates(t, "first CNP", r, 200_195_312_500, line400)
	if r.Alpha() != 1023.0/1024 {
		t.Fatalf("alpha = %v, want 1023/1024", r.Alpha())
	}
	if got := r.NextDeadline(); got != 307*us {
		t.Fatalf("next deadline %v, want the increase timer at 307us", got)
	}
	if !r.Limited() || r.Cuts() != 1 {
		t.Fatalf("limited %v cuts %d", r.Limited(), r.Cuts())
	}
}

// One cut never takes more than MinDecreaseFactor of the rate, even with α = 1
// (which asks for 50%).
func TestMinDecreaseFactorBoundsOneCut(t *testing.T) {
	p := mustPreset(t, "default")
	p.InitialAlpha = 1
	p.MinDecreaseFactor = 0.25
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	wantRates(t, "cut bounded to 25%", r, 300*units.Gbps, line400)
}

// DecreaseCoefficient is the fraction of α one cut removes: with α =
// 1023/1024, 0.5 cuts 400G to 400G·(1 − 1023/2048) = 200.1953125G and 0.25
// to 400G·(1 − 1023/4096) = 300.09765625G.
func TestDecreaseCoefficientSetsTheCut(t *testing.T) {
	for _, c := range []struct {
		coef float64
		want units.Rate
	}{
		{0.5, 200_195_312_500},
		{0.25, 300_097_656_250},
	} {
		p := mustPreset(t, "default")
		p.DecreaseCoefficient = c.coef
		r := NewReactionPoint(p, line400)
		r.OnCNP(0)
		wantRates(t, fmt.Sprintf("coefficient %v", c.coef), r, c.want, line400)
	}
	// MinDecreaseFactor still bounds the cut: α = 1 and coefficient 1 ask for
	// a cut to 0, one cut stops at half.
	p := mustPreset(t, "default")
	p.InitialAlpha, p.DecreaseCoefficient = 1, 1
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	wantRates(t, "coefficient 1, bounded", r, 200*units.Gbps, line400)
}

func TestMinRateIsTheFloorOfACut(t *testing.T) {
	p := mustPreset(t, "default")
	p.MinRate = 300 * units.Gbps
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	wantRates(t, "cut floored", r, 300*units.Gbps, line400)
}

func TestRateOnFirstCNPReplacesTheFirstCut(t *testing.T) {
	p := mustPreset(t, "default")
	p.RateOnFirstCNP = 40 * units.Gbps
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	wantRates(t, "first CNP", r, 40*units.Gbps, line400)
	r.Advance(300 * us) // T = 1 ≤ F: fast recovery towards RT = line rate
	wantRates(t, "first timer", r, 220*units.Gbps, line400)
}

// Regression: rate_on_first_cnp at the line rate used to release the
// limiter at once, so every CNP was a first one and nothing was cut (1,000
// CNPs in 1 ms left the rate at line rate with the cut counter at 1,000).
// The first CNP now keeps the rate and starts the episode; the next ones
// cut at the decrease checks as after any first cut.
func TestRateOnFirstCNPAtLineRateStillCuts(t *testing.T) {
	p := mustPreset(t, "default")
	p.RateOnFirstCNP = line400
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	wantRates(t, "first CNP", r, line400, line400)
	if !r.Limited() || r.Cuts() != 0 || r.NextDeadline() != 300*us {
		t.Fatalf("after the first CNP: limited %v, cuts %d, deadline %v", r.Limited(), r.Cuts(), r.NextDeadline())
	}
	// The second CNP (1 µs) is cut at the check of 4 µs, by α/2 with α
	// ticked at 1 µs (no CNP), 2, 3 and 4 µs (after a CNP):
	// RC = 400G · (1 − α/2).
	r.OnCNP(1 * us)
	r.Advance(4 * us)
	if r.Cuts() != 1 || r.Rate() >= line400 || r.Rate() < 199*units.Gbps {
		t.Fatalf("after the second CNP's check: cuts %d, rate %v", r.Cuts(), r.Rate())
	}
	for i := int64(2); i < 1000; i++ {
		r.OnCNP(units.Duration(i) * us)
	}
	r.Advance(1000 * us)
	// One cut per 4 µs check with a CNP: 249 cuts; the rate hits its floor.
	if r.Cuts() < 240 || r.Rate() != p.MinRate {
		t.Errorf("1,000 CNPs in 1 ms: %d cuts, rate %v (min %v)", r.Cuts(), r.Rate(), p.MinRate)
	}
	// Without CNPs the episode ends when the rate is back at line rate.
	q := NewReactionPoint(p, line400)
	q.OnCNP(0)
	q.Advance(300 * us)
	if q.Limited() || q.Rate() != line400 {
		t.Errorf("a lone first CNP at line rate: limited %v at %v after the first increase event", q.Limited(), q.Rate())
	}
}

// CNPs inside one DecreaseInterval cause one cut, at the next check of the
// grid anchored at the first CNP. α ticks every 1 µs meanwhile.
func TestDecreaseIntervalCoalescesCNPsIntoOneCut(t *testing.T) {
	p := mustPreset(t, "default")
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	rc1 := units.Rate(200_195_312_500)
	for _, at := range []units.Duration{1 * us, 2 * us, 3 * us} {
		r.OnCNP(at)
		wantRates(t, fmt.Sprintf("CNP at %v", at), r, rc1, line400)
		if r.NextDeadline() != 4*us {
			t.Fatalf("after CNP at %v: deadline %v, want 4us", at, r.NextDeadline())
		}
	}
	r.Advance(4*us - 1)
	wantRates(t, "just before the check", r, rc1, line400)
	r.Advance(4 * us)

	// α: tick 1 µs without a CNP (the first CNP is already in InitialAlpha),
	// ticks 2, 3, 4 µs each after a CNP (a CNP at a tick counts for the next).
	g := p.AlphaG
	a := float64(1023.0 / 1024 * g)
	for range 3 {
		a = float64(a*g) + (1 - g)
	}
	if r.Alpha() != a {
		t.Fatalf("alpha at 4us = %v, want %v", r.Alpha(), a)
	}
	want := units.Rate(float64(rc1) * (1 - a/2))
	wantRates(t, "one cut at 4us", r, want, line400)
	if want < 100_600_000_000 || want > 100_700_000_000 { // sanity of the hand computation
		t.Fatalf("cut to %v: not about half of 200.2G", want)
	}
	if r.Cuts() != 2 {
		t.Fatalf("cuts = %d, want 2 (first CNP + one coalesced cut)", r.Cuts())
	}
	if r.NextDeadline() != 304*us {
		t.Fatalf("deadline %v, want the restarted increase timer at 304us", r.NextDeadline())
	}
}

// Without CNPs α ← α·g once per AlphaInterval, ticks anchored at the first CNP.
func TestAlphaDecaysByGEachIntervalWithoutCNPs(t *testing.T) {
	p := mustPreset(t, "default")
	r := NewReactionPoint(p, line400)
	r.OnCNP(5 * us)
	r.Advance(6*us - 1)
	if r.Alpha() != 1023.0/1024 {
		t.Fatalf("alpha moved before the first tick: %v", r.Alpha())
	}
	want := 1023.0 / 1024
	for n := 1; n <= 200; n++ {
		r.Advance(5*us + units.Duration(n)*us)
		want = float64(want * p.AlphaG)
		if r.Alpha() != want {
			t.Fatalf("after %d intervals alpha = %v, want %v", n, r.Alpha(), want)
		}
	}
	if closed := 1023.0 / 1024 * math.Pow(1019.0/1024, 200); math.Abs(r.Alpha()-closed) > 1e-12 {
		t.Fatalf("alpha after 200 intervals = %v, closed form %v", r.Alpha(), closed)
	}
	// Skipping ahead in one call applies every tick in between.
	r2 := NewReactionPoint(p, line400)
	r2.OnCNP(5 * us)
	r2.Advance(205 * us)
	if r2.Alpha() != r.Alpha() {
		t.Fatalf("lazy alpha %v != stepwise %v", r2.Alpha(), r.Alpha())
	}
}

// A CNP every 4 µs (the receiver's fastest) for 1 ms: one cut per check, the
// rate falls monotonically to MinRate. With 1 µs alpha ticks only one tick in
// four sees a CNP, so α settles at the fixed point α* = (1−g)g³/(1−g⁴) ≈ 0.248,
// not at 1. No increase happens between cuts, so the target is never
// clamped and stays at line rate.
func TestPersistentMarkingDrivesRateToMinRate(t *testing.T) {
	p := mustPreset(t, "default")
	r := NewReactionPoint(p, line400)
	prev := r.Rate()
	for at := units.Duration(0); at <= units.Millisecond; at += 4 * us {
		r.OnCNP(at)
		if r.Rate() > prev {
			t.Fatalf("rate rose at %v: %v → %v", at, prev, r.Rate())
		}
		prev = r.Rate()
	}
	r.Advance(units.Millisecond + 4*us)
	if r.Rate() != p.MinRate {
		t.Fatalf("rate after 1 ms of marking = %v, want MinRate %v", r.Rate(), p.MinRate)
	}
	if r.Target() != line400 {
		t.Fatalf("target = %v, want line rate (never clamped)", r.Target())
	}
	g := p.AlphaG
	fixed := (1 - g) * g * g * g / (1 - g*g*g*g)
	if math.Abs(r.Alpha()-fixed) > 0.01 {
		t.Fatalf("alpha = %v, want ≈ %v", r.Alpha(), fixed)
	}
	if r.Cuts() != 251 {
		t.Fatalf("cuts = %d, want 251 (one per CNP)", r.Cuts())
	}
}

// A CNP in every alpha period drives α to 1: 1−α shrinks by g per tick.
func TestMarkingEveryAlphaPeriodDrivesAlphaToOne(t *testing.T) {
	r := NewReactionPoint(mustPreset(t, "default"), line400)
	for at := units.Duration(0); at <= units.Millisecond; at += us {
		r.OnCNP(at)
	}
	if r.Alpha() < 0.9999 {
		t.Fatalf("alpha = %v, want → 1", r.Alpha())
	}
	if r.Rate() != units.Mbps {
		t.Fatalf("rate = %v, want MinRate", r.Rate())
	}
}

// With F = 5 (the paper) the first five timer events halve the distance to
// RT, then additive increase begins (RT already at line rate, so capped).
func TestFastRecoveryHalvesDistanceToTargetFTimes(t *testing.T) {
	p := mustPreset(t, "paper")
	p.RateOnFirstCNP = 200 * units.Gbps
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	wantRates(t, "first CNP", r, 200*units.Gbps, line400)
	want := []units.Rate{300e9, 350e9, 375e9, 387.5e9, 393.75e9, 396.875e9, 398.4375e9}
	for i, w := range want {
		r.Advance(units.Duration(i+1) * 55 * us)
		wantRates(t, fmt.Sprintf("timer event %d", i+1), r, w, line400)
		if tm, _ := r.Stages(); tm != i+1 {
			t.Fatalf("T = %d after %d timer events", tm, i+1)
		}
	}
}

// Stages follow max/min of the timer and byte counter (default F = 1), with
// a clamped target so that AI and HAI steps show: FR, AI, AI, HAI, HAI.
func TestIncreaseStagesFollowTimerAndByteCounter(t *testing.T) {
	p := mustPreset(t, "default")
	bc := p.ByteCounter
	r := inEpisode(p, line400, 0, 200e9, 200e9)

	r.OnSent(1*us, bc) // BC=1, T=0: max ≤ F → fast recovery (RT = RC: no change)
	wantRates(t, "BC=1 fast recovery", r, 200e9, 200e9)
	r.OnSent(2*us, bc) // BC=2, T=0: additive, RT += 5M
	wantRates(t, "BC=2 additive", r, 200_002_500_000, 200_005_000_000)
	r.Advance(300 * us) // T=1, BC=2: additive
	wantRates(t, "T=1 additive", r, 200_006_250_000, 200_010_000_000)
	r.Advance(600 * us) // T=2, BC=2: min > F → hyper, RT += 50M
	wantRates(t, "T=2 hyper", r, 200_033_125_000, 200_060_000_000)
	r.OnSent(601*us, bc) // BC=3: hyper
	wantRates(t, "BC=3 hyper", r, 200_071_562_500, 200_110_000_000)
	if tm, b := r.Stages(); tm != 2 || b != 3 {
		t.Fatalf("stages T=%d BC=%d, want 2, 3", tm, b)
	}
}

// The byte counter keeps the remainder, so how OnSent is chunked does not
// matter.
func TestByteCounterCarriesRemainderAcrossReports(t *testing.T) {
	p := mustPreset(t, "default")
	r := inEpisode(p, line400, 0, 200e9, 200e9)
	third := p.ByteCounter / 3
	for i := range 7 { // 7/3 of the counter: two events
		r.OnSent(units.Duration(i+1)*us, third+1)
	}
	if _, b := r.Stages(); b != 2 {
		t.Fatalf("BC = %d, want 2", b)
	}
	r2 := inEpisode(p, line400, 0, 200e9, 200e9)
	r2.OnSent(us, 7*(third+1)) // one report of the same bytes
	if r2.Rate() != r.Rate() || r2.Target() != r.Target() {
		t.Fatalf("one report %v/%v != seven reports %v/%v", r2.Rate(), r2.Target(), r.Rate(), r.Target())
	}
}

// With the byte counter disabled BC mirrors T: F fast-recovery events, then
// hyper increase directly.
func TestDisabledByteCounterLetsTheTimerDriveAllStages(t *testing.T) {
	p := mustPreset(t, "default")
	p.ByteCounter = 0
	r := inEpisode(p, line400, 0, 200e9, 200e9)
	r.OnSent(us, 100<<20)
	wantRates(t, "bytes ignored", r, 200e9, 200e9)
	r.Advance(300 * us)
	wantRates(t, "T=1 fast recovery", r, 200e9, 200e9)
	r.Advance(600 * us)
	wantRates(t, "T=2 hyper", r, 200_025_000_000, 200_050_000_000)
}

// The target follows the current rate at a cut only if the rate had started
// to recover: after a byte-counter event, or after a timer event when
// ClampAfterTimeInc is on (the NIC default); always with ClampTargetRate.
func TestClampRuleForTheTargetAtACut(t *testing.T) {
	cutAfterTimer := func(p DCQCNParams) *ReactionPoint {
		r := NewReactionPoint(p, line400)
		r.OnCNP(0)          // 200.1953125G, RT 400G
		r.Advance(300 * us) // T=1: fast recovery to 300.09765625G
		r.OnCNP(301 * us)   // cut at the check at 304us
		r.Advance(304 * us)
		return r
	}
	// α at 304 µs: 301 plain ticks, the tick at 302 after the CNP, two plain.
	p := mustPreset(t, "default")
	a := 1023.0 / 1024
	for range 301 {
		a = float64(a * p.AlphaG)
	}
	a = float64(a*p.AlphaG) + (1 - p.AlphaG)
	a = float64(a * p.AlphaG)
	a = float64(a * p.AlphaG)
	rc := units.Rate(300_097_656_250)
	cut := units.Rate(float64(rc) * (1 - a/2))

	r := cutAfterTimer(p)
	wantRates(t, "clamp after time increase on", r, cut, rc)

	p.ClampAfterTimeInc = false
	r = cutAfterTimer(p)
	wantRates(t, "clamp after time increase off", r, cut, line400)

	// A byte-counter increase clamps regardless of ClampAfterTimeInc.
	r = NewReactionPoint(p, line400)
	r.OnCNP(0)
	r.OnSent(us, p.ByteCounter)
	wantRates(t, "byte event", r, 300_097_656_250, line400)
	r.OnCNP(2 * us)
	r.Advance(4 * us)
	if r.Target() != 300_097_656_250 {
		t.Fatalf("target %v after a byte-driven increase, want clamped to 300.09765625G", r.Target())
	}

	// Back-to-back cuts: clamped only with ClampTargetRate.
	for _, clamp := range []bool{false, true} {
		p := mustPreset(t, "default")
		p.ClampTargetRate = clamp
		r := NewReactionPoint(p, line400)
		r.OnCNP(0)
		r.OnCNP(1 * us)
		r.Advance(4 * us)
		want := line400
		if clamp {
			want = 200_195_312_500
		}
		if r.Target() != want {
			t.Fatalf("ClampTargetRate=%v: target %v, want %v", clamp, r.Target(), want)
		}
	}
}

// When RC is back at line rate the limiter is released: no timers, and the
// next CNP starts a new episode with α = InitialAlpha and an immediate cut.
func TestRecoveryReleasesTheLimiterAndTheNextCNPStartsOver(t *testing.T) {
	p := mustPreset(t, "tuned-final")
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	end := sendBackToBack(r, 0, units.Millisecond, 4096, func() bool { return !r.Limited() })
	if r.Limited() || r.NextDeadline() != NoDeadline {
		t.Fatalf("still limited at %v: RC %v RT %v", end, r.Rate(), r.Target())
	}
	wantRates(t, "released", r, line400, line400)
	r.OnCNP(end + us)
	if r.Alpha() != p.InitialAlpha || r.Rate() != 200_195_312_500 {
		t.Fatalf("new episode: alpha %v rate %v", r.Alpha(), r.Rate())
	}
}

func TestNextDeadlineIsTheEarliestArmedTimer(t *testing.T) {
	r := NewReactionPoint(mustPreset(t, "default"), line400)
	if r.NextDeadline() != NoDeadline {
		t.Fatal("deadline before any CNP")
	}
	r.OnCNP(10 * us)
	if r.NextDeadline() != 310*us {
		t.Fatalf("deadline %v, want increase timer 310us", r.NextDeadline())
	}
	r.OnCNP(13 * us)
	if r.NextDeadline() != 14*us {
		t.Fatalf("deadline %v, want decrease check 14us", r.NextDeadline())
	}
	r.Advance(14 * us)
	if r.NextDeadline() != 314*us {
		t.Fatalf("deadline %v, want restarted increase timer 314us", r.NextDeadline())
	}
}

// Calling Advance more often than needed changes nothing: the outcome
// depends only on the inputs and their times.
func TestExtraAdvanceCallsChangeNothing(t *testing.T) {
	p := mustPreset(t, "tuned-ramp")
	script := func(extra bool) [][3]float64 {
		r := NewReactionPoint(p, line400)
		var trace [][3]float64
		next := units.Duration(0)
		for now := units.Duration(0); now < 400*us; now += 250 * units.Nanosecond {
			if extra {
				r.Advance(now)
			}
			if now%(37*us) == 0 {
				r.OnCNP(now)
			}
			if now >= next {
				r.OnSent(now, 4096)
				next = now + units.SerializationTime(4096, r.Rate())
			}
			if now%us == 0 {
				r.Advance(now)
				trace = append(trace, [3]float64{float64(r.Rate()), float64(r.Target()), r.Alpha()})
			}
		}
		return trace
	}
	a, b := script(false), script(true)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("step %d: %v != %v", i, a[i], b[i])
		}
	}
}

func TestReactionPointDoesNotAllocate(t *testing.T) {
	r := NewReactionPoint(mustPreset(t, "tuned-final"), line400)
	now := units.Duration(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += 3 * us
		r.OnCNP(now)
		r.OnSent(now, 4096)
		r.Advance(now + us)
		_ = r.NextDeadline()
		_ = r.Rate()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call sequence", allocs)
	}
	// Init gives r its own copy of the parameters (one allocation at
	// most); InitShared, what a NIC's QPs use, shares the NIC's and
	// allocates nothing.
	var embedded struct{ rp ReactionPoint }
	shared := mustPreset(t, "default").ForLine(line400)
	allocs = testing.AllocsPerRun(100, func() { embedded.rp.InitShared(&shared, line400) })
	if allocs != 0 {
		t.Fatalf("InitShared allocates %v", allocs)
	}
	allocs = testing.AllocsPerRun(100, func() { embedded.rp.Init(mustPreset(t, "default"), line400) })
	if allocs > 1 {
		t.Fatalf("Init allocates %v, want at most its one copy of the parameters", allocs)
	}
}

// recoveryTime plays a QP that always has data at 400G and measures how long
// its rate takes to climb from rc to ≥ 399G, with target rt at the start.
func recoveryTime(p DCQCNParams, rc, rt units.Rate) (units.Duration, uint64) {
	r := inEpisode(p, line400, 0, rc, rt)
	end := sendBackToBack(r, 0, 5*units.Second, 4096, func() bool { return r.Rate() >= 399*units.Gbps })
	return end, r.Increases()
}

// The recovery time of a 400G flow cut to 200G, per preset, in two cases:
// the target intact (RT = 400G, a single cut) and the target clamped to the
// cut rate (RT = 200G, a cut that interrupted a recovery, which is what
// repeated marking in a collective produces). The sender always has data
// (4 KiB packets back to back at the current rate), so the byte counter runs.
func TestRecoveryTimePerPreset(t *testing.T) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "recovery of a 400G QP from 200G to ≥399G (4 KiB packets back to back)\n")
	fmt.Fprintf(&sb, "%-22s %14s %8s %14s %8s\n", "preset", "RT=400G", "events", "RT=200G", "events")
	got := map[string][2]units.Duration{}
	for _, name := range PresetNames() {
		p := mustPreset(t, name)
		if !p.Enabled {
			continue
		}
		a, na := recoveryTime(p, 200*units.Gbps, line400)
		b, nb := recoveryTime(p, 200*units.Gbps, 200*units.Gbps)
		got[name] = [2]units.Duration{a, b}
		fmt.Fprintf(&sb, "%-22s %14v %8d %14v %8d\n", name, a, na, b, nb)
	}
	t.Log("\n" + sb.String())

	ms := units.Millisecond
	if d := got["default"][1]; d < 50*ms {
		t.Errorf("default, clamped target: %v; want many ms (tiny AI/HAI steps)", d)
	}
	for _, c := range []int{0, 1} {
		if d := got["tuned-final"][c]; d > 100*us {
			t.Errorf("tuned-final case %d: %v; want < 100us", c, d)
		}
		if got["tuned-ramp"][c] > got["default"][c] || got["tuned-final"][c] > got["tuned-ramp"][c] {
			t.Errorf("case %d: tuning does not shorten recovery: %v", c, got)
		}
	}
	if got["tuned-increased-step"][1] > got["default"][1]/10 {
		t.Errorf("larger steps should recover a clamped target ≥10× faster: %v vs %v",
			got["tuned-increased-step"][1], got["default"][1])
	}
}

func BenchmarkReactionPointPacket(b *testing.B) {
	r := NewReactionPoint(presetTunedFinal(), line400)
	now := units.Duration(0)
	for i := range b.N {
		now += 10 * units.Nanosecond
		if i%512 == 0 {
			r.OnCNP(now)
		}
		r.OnSent(now, 4096)
		if d := r.NextDeadline(); d <= now {
			r.Advance(now)
		}
	}
}

// first_cnp_cut: next-check. The first CNP engages the limiter at line rate
// and the cut waits for the episode's first check (4 µs), by α after its
// ticks at 1…4 µs without a CNP.
func TestFirstCutAtCheck(t *testing.T) {
	p := mustPreset(t, "default")
	p.FirstCutAtCheck = true
	r := NewReactionPoint(p, line400)
	r.OnCNP(0)
	wantRates(t, "first CNP", r, line400, line400)
	if !r.Limited() || r.Cuts() != 0 || r.NextDeadline() != 4*us {
		t.Fatalf("limited %v, cuts %d, deadline %v", r.Limited(), r.Cuts(), r.NextDeadline())
	}
	r.OnCNP(2 * us) // coalesced into the same check; counts for α from 3 µs
	r.Advance(4 * us)
	g := p.AlphaG
	a := float64(float64(p.InitialAlpha*g) * g) // ticks 1, 2 µs: no CNP since the first
	a = float64(a*g) + (1 - g)                  // tick 3 µs: the CNP at 2 µs
	a = float64(a * g)                          // tick 4 µs
	want := units.Rate(float64(line400) * (1 - float64(a*p.DecreaseCoefficient)))
	if r.Cuts() != 1 || r.Rate() != want || r.Alpha() != a {
		t.Fatalf("at the check: cuts %d, rate %d (want %d), α %v (want %v)", r.Cuts(), r.Rate(), want, r.Alpha(), a)
	}
}

// alpha_on_new_episode: keep. After an episode ends, α goes on decaying by
// g per alpha interval, and the next episode's first cut uses that α
// rather than InitialAlpha.
func TestKeepAlphaAcrossEpisodes(t *testing.T) {
	for _, keep := range []bool{false, true} {
		p := mustPreset(t, "default")
		p.ByteCounter, p.KeepAlpha = 0, keep
		r := NewReactionPoint(p, line400)
		r.OnCNP(0)
		var rel units.Duration
		for at := 300 * us; r.Limited(); at += 300 * us {
			r.Advance(at)
			rel = at
		}
		aRel := r.Alpha()
		t1 := rel + 250*us
		r.OnCNP(t1)
		want := p.InitialAlpha
		if keep {
			want = float64(aRel * powInt(p.AlphaG, uint64((t1-rel)/us)))
		}
		if r.Alpha() != want {
			t.Errorf("keep %v: α %v at the second episode, want %v (released at %v with α %v)", keep, r.Alpha(), want, rel, aRel)
		}
		if keep && !(r.Alpha() < aRel && aRel < p.InitialAlpha) {
			t.Errorf("keep: α did not decay: %v after %v after %v", r.Alpha(), aRel, p.InitialAlpha)
		}
	}
	if got, want := powInt(0.5, 10), 1.0/1024; got != want {
		t.Errorf("powInt(0.5, 10) = %v", got)
	}
}

// byte_counter_off: zero. Without a byte counter BC stays 0 instead of
// mirroring T: the second timer event is additive, not hyper.
func TestByteStagesOffNeverHyper(t *testing.T) {
	for _, off := range []bool{false, true} {
		p := mustPreset(t, "default")
		p.ByteCounter, p.Threshold, p.ByteStagesOff = 0, 1, off
		r := inEpisode(p, line400, 0, 100*units.Gbps, 200*units.Gbps)
		r.Advance(300 * us) // T = 1 ≤ F: fast recovery
		wantRates(t, "T=1", r, 150*units.Gbps, 200*units.Gbps)
		r.Advance(600 * us) // T = 2
		rt := 200*units.Gbps + p.HAIRate
		if off {
			rt = 200*units.Gbps + p.AIRate
		}
		gap := rt - 150*units.Gbps
		wantRates(t, fmt.Sprintf("T=2 (off %v)", off), r, 150*units.Gbps+gap-gap/2, rt)
	}
}
