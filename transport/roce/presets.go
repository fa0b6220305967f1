package roce

import (
	"fmt"
	"strings"

	"fabriclab/units"
)

// The DCQCN presets. Each is a function so that callers always get a fresh
// value they may override knob by knob.
//
//	off                   PFC only: CNPs are neither sent nor acted on.
//	default               conservative NIC factory values (ConnectX-4 Lx/5
//	                      firmware defaults, README "DCQCN knobs", default column).
//	paper                 the values of the DCQCN paper (SIGCOMM 2015).
//	tuned-ramp            default, but increase events come ~8–30× more often.
//	tuned-increased-step  default, but each increase step is ~200× larger.
//	tuned-final           both, sized so a 400G flow cut to half is back at
//	                      line rate within tens of microseconds.
//
// The three tuned presets reproduce the tuning sequence of a test-equipment
// vendor's 32×400G all-to-all demo (README, reproduction 2). tuned-ramp and
// tuned-increased-step each change ONE group of knobs relative to default
// (when increase events happen, resp. how large they are), so that comparing
// them with default isolates each effect; tuned-final combines both.
var presets = []struct {
	name string
	make func() DCQCNParams
}{
	{"off", presetOff},
	{"default", presetDefault},
	{"paper", presetPaper},
	{"tuned-ramp", presetTunedRamp},
	{"tuned-increased-step", presetTunedIncreasedStep},
	{"tuned-final", presetTunedFinal},
}

// Preset returns the named DCQCN parameter set (see PresetNames). Names are
// matched case-insensitively.
func Preset(name string) (DCQCNParams, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	for _, p := range presets {
		if p.name == key {
			return p.make(), nil
		}
	}
	return DCQCNParams{}, fmt.Errorf("unknown DCQCN preset %q (valid: %s)", name, strings.Join(PresetNames(), ", "))
}

// PresetNames lists the preset names in a stable order.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

// presetDefault: NIC factory defaults, exactly README "DCQCN knobs". Fixed-point
// NIC values are converted: dce_tcp_g=1019 and initial_alpha_value=1023 are
// in 1/1024 units, rpg_byte_reset=32767 is in 64-byte units.
func presetDefault() DCQCNParams {
	return DCQCNParams{
		Enabled:             true,
		AlphaG:              1019.0 / 1024,
		AlphaInterval:       1 * units.Microsecond,
		InitialAlpha:        1023.0 / 1024,
		RateOnFirstCNP:      0,
		MinDecreaseFactor:   0.5,
		DecreaseCoefficient: 0.5, // rpg_gd 11: a cut of RC·α/2 (README "DCQCN knobs")
		DecreaseInterval:    4 * units.Microsecond,
		MinRate:             1 * units.Mbps,
		ClampTargetRate:     false,
		ClampAfterTimeInc:   true,
		IncreaseInterval:    300 * units.Microsecond,
		ByteCounter:         32767 * 64,
		Threshold:           1,
		AIRate:              5 * units.Mbps,
		HAIRate:             50 * units.Mbps,
		CNPInterval:         4 * units.Microsecond,
	}
}

// presetOff: PFC only. The other knobs keep their default values so that
// turning DCQCN on again with an override starts from the defaults.
func presetOff() DCQCNParams {
	p := presetDefault()
	p.Enabled = false
	return p
}

// presetPaper: the DCQCN paper (Zhu et al., SIGCOMM 2015) on 40G NICs.
func presetPaper() DCQCNParams {
	p := presetDefault()
	// The paper's g = 1/256 weighs the new sample (α ← (1−g)α + g); our AlphaG
	// is the weight of the old value, hence 255/256.
	p.AlphaG = 255.0 / 256
	// α is updated once per 55 µs without CNPs and starts at 1.
	p.AlphaInterval = 55 * units.Microsecond
	p.InitialAlpha = 1
	// The paper cuts on a CNP; the receiver sends at most one CNP per 50 µs
	// per flow, so at most one cut per 50 µs.
	p.DecreaseInterval = 50 * units.Microsecond
	p.CNPInterval = 50 * units.Microsecond
	// The paper's cut is RC·(1 − α/2), the same fraction as the NIC default.
	p.DecreaseCoefficient = 0.5
	// The paper always remembers the rate before a cut as the target.
	p.ClampTargetRate = true
	// Rate-increase timer 55 µs, byte counter 10 MB, F = 5 fast-recovery steps.
	p.IncreaseInterval = 55 * units.Microsecond
	p.ByteCounter = 10 * units.MB
	p.Threshold = 5
	// R_AI = 40 Mb/s and R_HAI = 200 Mb/s, as in the configuration of the
	// paper authors' ns-3 simulator.
	p.AIRate = 40 * units.Mbps
	p.HAIRate = 200 * units.Mbps
	return p
}

// presetTunedRamp makes increase events frequent; step sizes stay default.
func presetTunedRamp() DCQCNParams {
	p := presetDefault()
	// Timer 300 µs → 10 µs: a few RTTs of a 2-tier Clos, so a flow that stops
	// being marked starts recovering within one collective step instead of
	// waiting a third of a millisecond per step.
	p.IncreaseInterval = 10 * units.Microsecond
	// Byte counter 2 MiB → 256 KiB: one byte event per ~5 µs at 400G and per
	// ~10 µs at 200G, so the byte counter and the timer tick at similar rates
	// and hyper increase (which needs both past F) is reached after ~20 µs.
	p.ByteCounter = 256 * units.KiB
	return p
}

// presetTunedIncreasedStep makes each increase step large; timing stays default.
func presetTunedIncreasedStep() DCQCNParams {
	p := presetDefault()
	// AI 5 Mb/s → 1 Gb/s (0.25% of 400G): additive steps that matter at 400G
	// while staying small next to a fair share of 400G/32 = 12.5G.
	p.AIRate = 1 * units.Gbps
	// HAI 50 Mb/s → 10 Gb/s (2.5% of 400G): a clamped 200G target regains the
	// other 200G in 20 hyper steps instead of 4000.
	p.HAIRate = 10 * units.Gbps
	return p
}

// presetTunedFinal combines a fast ramp with large steps.
func presetTunedFinal() DCQCNParams {
	p := presetDefault()
	// Timer 300 µs → 5 µs: hyper increase (T > F = 1) after 10 µs.
	p.IncreaseInterval = 5 * units.Microsecond
	// Byte counter 2 MiB → 64 KiB: one event per ~1.3 µs at 400G (2.6 µs at
	// 200G), i.e. roughly one per RTT; most increase events come from it.
	p.ByteCounter = 64 * units.KiB
	// AI 5 Mb/s → 2.5 Gb/s and HAI 50 Mb/s → 25 Gb/s (0.6% and 6% of 400G): a
	// clamped 200G target climbs to 400G in 8 hyper events (~15 µs) and RC
	// follows within a few more halvings; a flow cut to half with an intact
	// target (RT = 400G) needs only the halvings.
	p.AIRate = 2500 * units.Mbps
	p.HAIRate = 25 * units.Gbps
	return p
}

// Validate reports knob values the reaction point cannot run with. A disabled
// parameter set is always valid.
func (p DCQCNParams) Validate() error {
	if !p.Enabled {
		return nil
	}
	var bad []string
	check := func(ok bool, msg string, args ...any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(msg, args...))
		}
	}
	check(p.AlphaG >= 0 && p.AlphaG <= 1, "alpha factor g = %v must be in [0, 1]", p.AlphaG)
	check(p.AlphaInterval > 0, "alpha interval %v must be > 0", p.AlphaInterval)
	check(p.InitialAlpha >= 0 && p.InitialAlpha <= 1, "initial alpha %v must be in [0, 1]", p.InitialAlpha)
	check(p.RateOnFirstCNP >= 0, "rate on first CNP %v must be ≥ 0", p.RateOnFirstCNP)
	check(p.MinDecreaseFactor > 0 && p.MinDecreaseFactor <= 1, "min decrease factor %v must be in (0, 1]", p.MinDecreaseFactor)
	check(p.DecreaseCoefficient > 0 && p.DecreaseCoefficient <= 1, "decrease coefficient %v must be in (0, 1]", p.DecreaseCoefficient)
	check(p.DecreaseInterval >= 0, "decrease interval %v must be ≥ 0", p.DecreaseInterval)
	check(p.MinRate > 0, "min rate %v must be > 0", p.MinRate)
	check(p.IncreaseInterval > 0, "rate increase interval %v must be > 0", p.IncreaseInterval)
	check(p.ByteCounter >= 0, "byte counter %v must be ≥ 0 (0 disables it)", p.ByteCounter)
	check(p.Threshold >= 0, "threshold F = %d must be ≥ 0", p.Threshold)
	check(p.AIRate >= 0, "additive increase %v must be ≥ 0", p.AIRate)
	check(p.HAIRate >= 0, "hyper increase %v must be ≥ 0", p.HAIRate)
	check(p.CNPInterval >= 0, "CNP interval %v must be ≥ 0", p.CNPInterval)
	if len(bad) > 0 {
		return fmt.Errorf("dcqcn: %s", strings.Join(bad, "; "))
	}
	return nil
}
