package lab

import (
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

// More QPs per rank pair give ECMP more 5-tuples to spread, so the most
// loaded uplink carries less: on a seeded 32-rank all-to-all over 8 spines
// the routed ideal (the busiest link's bytes) and the CCT both improve from
// 1 to 8 QPs.
func TestMoreQPsReduceWorstECMPCollision(t *testing.T) {
	res := map[int][2]float64{}
	for _, q := range []int{1, 8} {
		s := leafSpine(32, 8, 8)
		s.Workload = scenario.Workload{Kind: "alltoall", QPs: q, Iterations: 1}
		r := run(t, s, 32*units.MiB)
		res[q] = [2]float64{r.RoutedIdealS, r.CCTS}
		t.Logf("qps %d: routed ideal %.1f us (%.1f%% of NIC bound), cct %.1f us", q, r.RoutedIdealS*1e6, 100*r.IdealS/r.RoutedIdealS, r.CCTS*1e6)
	}
	if !(res[8][0] < 0.95*res[1][0]) {
		t.Errorf("8 QPs: busiest link %.1f us, not well below 1 QP's %.1f us", res[8][0]*1e6, res[1][0]*1e6)
	}
	if !(res[8][1] < res[1][1]) {
		t.Errorf("8 QPs: CCT %.1f us, not below 1 QP's %.1f us", res[8][1]*1e6, res[1][1]*1e6)
	}
}
