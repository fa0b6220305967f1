package scenario

import (
	"fabriclab/transport/roce"
)

// DCQCNParams resolves a scenario's DCQCN preset and per-knob overrides into
// the parameters the RoCE transport runs with. Preset "off" gives
// Enabled=false (PFC only); overrides still apply to the other knobs so that
// a report can show them.
func DCQCNParams(spec *Scenario) (roce.DCQCNParams, error) {
	return dcqcnParams(spec.Transport.DCQCN)
}

func dcqcnParams(d DCQCN) (roce.DCQCNParams, error) {
	p, err := roce.Preset(d.Preset)
	if err != nil {
		return roce.DCQCNParams{}, err
	}
	set(&p.AlphaG, d.AlphaG)
	set(&p.AlphaInterval, d.AlphaInterval)
	set(&p.InitialAlpha, d.InitialAlpha)
	set(&p.RateOnFirstCNP, d.RateOnFirstCNP)
	set(&p.MinDecreaseFactor, d.MinDecreaseFactor)
	set(&p.DecreaseCoefficient, d.DecreaseCoefficient)
	set(&p.DecreaseInterval, d.DecreaseInterval)
	set(&p.MinRate, d.MinRate)
	set(&p.ClampTargetRate, d.ClampTargetRate)
	set(&p.ClampAfterTimeInc, d.ClampAfterTimeInc)
	set(&p.IncreaseInterval, d.IncreaseInterval)
	set(&p.ByteCounter, d.ByteCounter)
	set(&p.Threshold, d.Threshold)
	set(&p.AIRate, d.AIRate)
	set(&p.HAIRate, d.HAIRate)
	set(&p.CNPInterval, d.CNPInterval)
	is := func(v *string, want string) *bool {
		if v == nil {
			return nil
		}
		b := *v == want
		return &b
	}
	set(&p.FirstCutAtCheck, is(d.FirstCNPCut, "next-check"))
	set(&p.KeepAlpha, is(d.AlphaOnNewEpisode, "keep"))
	set(&p.ByteStagesOff, is(d.ByteCounterOff, "zero"))
	return p, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
