package roce

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"fabriclab/units"
)

func TestEveryPresetLoadsAndIsValid(t *testing.T) {
	names := PresetNames()
	want := []string{"off", "default", "paper", "tuned-ramp", "tuned-increased-step", "tuned-final"}
	if !slices.Equal(names, want) {
		t.Fatalf("PresetNames() = %v, want %v", names, want)
	}
	for _, n := range names {
		p, err := Preset(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if p.Enabled != (n != "off") {
			t.Errorf("%s: Enabled = %v", n, p.Enabled)
		}
		if p.DecreaseCoefficient != 0.5 {
			t.Errorf("%s: DecreaseCoefficient = %v, want 0.5 (rpg_gd 11)", n, p.DecreaseCoefficient)
		}
	}
	if p, err := Preset(" Tuned-Final "); err != nil || p != presetTunedFinal() {
		t.Errorf("names should match case-insensitively: %v", err)
	}
	names[0] = "mutated"
	if PresetNames()[0] != "off" {
		t.Error("PresetNames returns shared state")
	}
}

func TestUnknownPresetErrorListsValidNames(t *testing.T) {
	_, err := Preset("fast")
	if err == nil {
		t.Fatal("no error for an unknown preset")
	}
	for _, n := range PresetNames() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %q", err, n)
		}
	}
	if !strings.Contains(err.Error(), `"fast"`) {
		t.Errorf("error %q does not quote the bad name", err)
	}
}

// The default preset is the default column of the README's "DCQCN knobs" table.
func TestDefaultPresetIsTheDesignTable(t *testing.T) {
	want := DCQCNParams{
		Enabled:             true,
		AlphaG:              1019.0 / 1024,           // dce_tcp_g 1019
		AlphaInterval:       1 * units.Microsecond,   // dce_tcp_rtt
		InitialAlpha:        1023.0 / 1024,           // initial_alpha_value 1023
		RateOnFirstCNP:      0,                       // rate_to_set_on_first_cnp
		MinDecreaseFactor:   0.50,                    // rpg_min_dec_fac 50 %
		DecreaseCoefficient: 0.5,                     // rpg_gd 11: cut = rate·α/2
		DecreaseInterval:    4 * units.Microsecond,   // rate_reduce_monitor_period
		MinRate:             1 * units.Mbps,          // rpg_min_rate
		ClampTargetRate:     false,                   // clamp_tgt_rate
		ClampAfterTimeInc:   true,                    // clamp_tgt_rate_after_time_inc
		IncreaseInterval:    300 * units.Microsecond, // rpg_time_reset
		ByteCounter:         2097088,                 // rpg_byte_reset 32767 × 64 B
		Threshold:           1,                       // rpg_threshold
		AIRate:              5 * units.Mbps,          // rpg_ai_rate
		HAIRate:             50 * units.Mbps,         // rpg_hai_rate
		CNPInterval:         4 * units.Microsecond,   // min_time_between_cnps
	}
	got := mustPreset(t, "default")
	if got != want {
		t.Fatalf("default preset\n got %+v\nwant %+v", got, want)
	}
	off := mustPreset(t, "off")
	off.Enabled = true
	if off != want {
		t.Fatalf("off should be default with Enabled=false, got %+v", off)
	}
}

// Each tuned preset changes only the knobs its comment names.
func TestTunedPresetsChangeOnlyTheirKnobs(t *testing.T) {
	def := mustPreset(t, "default")
	cases := map[string][]string{
		"tuned-ramp":           {"IncreaseInterval", "ByteCounter"},
		"tuned-increased-step": {"AIRate", "HAIRate"},
		"tuned-final":          {"IncreaseInterval", "ByteCounter", "AIRate", "HAIRate"},
	}
	for name, knobs := range cases {
		p := mustPreset(t, name)
		dv, pv := reflect.ValueOf(def), reflect.ValueOf(p)
		var changed []string
		for i := range dv.NumField() {
			if dv.Field(i).Interface() != pv.Field(i).Interface() {
				changed = append(changed, dv.Type().Field(i).Name)
			}
		}
		if !slices.Equal(changed, knobs) {
			t.Errorf("%s changes %v, want %v", name, changed, knobs)
		}
	}
	ramp, step, final := mustPreset(t, "tuned-ramp"), mustPreset(t, "tuned-increased-step"), mustPreset(t, "tuned-final")
	if !(ramp.IncreaseInterval < def.IncreaseInterval && ramp.ByteCounter < def.ByteCounter &&
		step.AIRate > def.AIRate && step.HAIRate > def.HAIRate &&
		final.IncreaseInterval <= ramp.IncreaseInterval && final.ByteCounter <= ramp.ByteCounter &&
		final.AIRate >= step.AIRate && final.HAIRate >= step.HAIRate) {
		t.Error("tuned presets are not ordered as documented")
	}
}

func TestPaperPresetUsesThePaperConvention(t *testing.T) {
	p := mustPreset(t, "paper")
	if p.AlphaG != 1-1.0/256 || p.IncreaseInterval != 55*units.Microsecond ||
		p.ByteCounter != 10*units.MB || p.Threshold != 5 || p.CNPInterval != 50*units.Microsecond {
		t.Fatalf("paper preset %+v", p)
	}
}

func TestValidateNamesEachBadKnob(t *testing.T) {
	p := mustPreset(t, "default")
	p.AlphaG = 1.5
	p.IncreaseInterval = 0
	p.Threshold = -1
	p.DecreaseCoefficient = 0
	err := p.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"alpha factor", "rate increase interval", "threshold", "decrease coefficient"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	p.Enabled = false
	if p.Validate() != nil {
		t.Error("a disabled parameter set should always be valid")
	}
}
