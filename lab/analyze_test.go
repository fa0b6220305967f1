package lab

import (
	"math"
	"sort"
	"testing"

	"fabriclab/flow"
	"fabriclab/units"
)

// The flow-level analysis agrees with the packet simulator on a lossy
// (no PFC) ECMP permutation of long flows: the predicted completion within
// 10% of the simulated CCT, and each flow's simulated average rate within
// 10% of its max-min rate in the median.
func TestAnalyzeMatchesPacketSimulator(t *testing.T) {
	s := fatTree4("ecmp", "go-back-n")
	s.Switch.PFC.Enabled = false
	s.Sim.RecordFlows = true
	j := job(s, 16*units.MB)
	sm, err := Build(j)
	if err != nil {
		t.Fatal(err)
	}
	flows, err := flow.RootFlows(sm.DAG, sm)
	if err != nil {
		t.Fatal(err)
	}
	eff := 4096.0 / (4096 + 82)
	rep := flow.Analyze(sm.Topo.Net, flows, flow.Options{Efficiency: eff, Tiers: sm.Topo.Tiers})
	r := run(t, s, 16*units.MB)
	if r.Drops != 0 {
		t.Logf("lossy run dropped %d packets", r.Drops)
	}
	if d := math.Abs(r.CCTS-rep.CompletionS) / rep.CompletionS; d > 0.10 {
		t.Errorf("simulated CCT %.1f us, analyze predicts %.1f us (%.1f%% apart)", r.CCTS*1e6, rep.CompletionS*1e6, 100*d)
	}
	// Per flow: simulated average rate against the max-min rate.
	want := map[[2]int]float64{}
	for _, f := range rep.Flows {
		want[[2]int{f.Src, f.Dst}] = f.GBps
	}
	var ratios []float64
	for _, f := range r.Records {
		got := float64(f.Bytes) / f.FCTS / 1e9
		ratios = append(ratios, got/want[[2]int{f.Src, f.Dst}])
	}
	sort.Float64s(ratios)
	med := ratios[len(ratios)/2]
	t.Logf("CCT sim %.1f us vs analyze %.1f us; per-flow rate ratio sim/analyze min %.2f median %.2f max %.2f",
		r.CCTS*1e6, rep.CompletionS*1e6, ratios[0], med, ratios[len(ratios)-1])
	if math.Abs(med-1) > 0.10 {
		t.Errorf("median simulated/analyzed flow rate %.2f, want within 10%% of 1", med)
	}
}
