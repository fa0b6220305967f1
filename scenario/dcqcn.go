package scenario

import (
	"fmt"
	"reflect"
	"strings"

	"fabriclab/transport/roce"
	"fabriclab/transport/uet"
	"fabriclab/units"
)

// DCQCNParams resolves a scenario's DCQCN preset and per-knob overrides into
// the parameters the RoCE transport runs with. Preset "off" gives
// Enabled=false (PFC only); overrides still apply to the other knobs so that
// a report can show them.
func DCQCNParams(spec *Scenario) (roce.DCQCNParams, error) {
	return dcqcnParams(spec.Transport.DCQCN)
}

// HPCC's defaults: the paper's η and maxStage, a 50 Mb/s additive step
// (0.05% of 100G), and the floor of the HPCC authors' ns-3 code.
const (
	DefaultHPCCEta      = 0.95
	DefaultHPCCMaxStage = 5
	DefaultHPCCRateAI   = 50 * units.Mbps
	DefaultHPCCMinRate  = 100 * units.Mbps
)

// HPCCParams resolves transport.cc and transport.hpcc: HPCC enabled (and
// DCQCN, which it replaces, off) with cc: hpcc, each knob at its default
// unless set.
func HPCCParams(spec *Scenario) roce.HPCCParams {
	h := spec.Transport.HPCC
	p := roce.HPCCParams{Enabled: spec.Transport.CC == "hpcc", Eta: DefaultHPCCEta, MaxStage: DefaultHPCCMaxStage,
		RateAI: DefaultHPCCRateAI, MinRate: DefaultHPCCMinRate, BaseRTT: h.BaseRTT}
	if h.Eta > 0 {
		p.Eta = h.Eta
	}
	if h.MaxStage > 0 {
		p.MaxStage = h.MaxStage
	}
	if h.RateAI > 0 {
		p.RateAI = h.RateAI
	}
	if h.MinRate > 0 {
		p.MinRate = h.MinRate
	}
	return p
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

// Knobs lists the knobs set beside the preset, as the file names them
// ("alpha_interval 21us, clamp_target_rate true"), in the order of the
// DCQCN type; "" when none is. A summary that says only "DCQCN default"
// would hide them.
func (d DCQCN) Knobs() string {
	v, t := reflect.ValueOf(d), reflect.TypeOf(d)
	var out []string
	for i := range t.NumField() {
		f := v.Field(i)
		name, ok := yamlKey(t.Field(i))
		if !ok || f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		out = append(out, fmt.Sprintf("%s %v", name, f.Elem().Interface()))
	}
	return strings.Join(out, ", ")
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// UETConfig resolves transport.uet (and the nic section) into the UET
// transport's settings, each knob at its default unless set; NSCC's
// target delay stays 0 when left to the fabric (the lab sets it).
func UETConfig(spec *Scenario) uet.Config {
	u, nic := spec.Transport.UET.WithDefaults(), spec.NIC
	or := func(v, def float64) float64 {
		if v > 0 {
			return v
		}
		return def
	}
	cfg := uet.Config{
		MTU: int32(nic.MTU), Overhead: int32(nic.Overhead),
		DataPrio: uint8(nic.DataPriority), CtrlPrio: uint8(nic.ControlPriority), ControlWire: int32(nic.ControlWire),
		RTO: nic.RTO, Entropies: u.Entropies, BaseRTT: u.BaseRTT,
		NSCC: uet.NSCCParams{TargetDelay: u.TargetDelay, IncreaseGain: or(u.IncreaseGain, 1), FairIncrease: or(u.FairIncrease, 1),
			DecreaseGain: or(u.DecreaseGain, 1), MaxWindow: or(u.MaxWindow, 1.25)},
	}
	switch u.LB {
	case "reps":
		cfg.LB = uet.REPS
	case "single":
		cfg.LB = uet.Single
	}
	cfg.NSCCOn = u.CC != "rccc"
	cfg.RCCC = u.CC != "nscc"
	return cfg
}
