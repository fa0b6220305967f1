package lab

import (
	"testing"

	"fabriclab/scenario"
	"fabriclab/units"
)

// uetPermutation is the k=8 fat-tree (128 × 100G) 2 MB permutation with
// transport kind (uet or roce) and UET load balancing lb.
func uetPermutation(t *testing.T, kind, lb string) scenario.Job {
	t.Helper()
	s := scenario.Defaults()
	s.Name = "uet-perm"
	s.Topology = scenario.Topology{Kind: "fat-tree", K: 8,
		HostLink: scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}, FabricLink: scenario.Link{Rate: 100 * units.Gbps, Delay: units.Microsecond}}
	s.Switch.PFC.Enabled, s.Switch.ECN.Enabled = true, true
	s.Transport.Kind = kind
	s.Transport.DCQCN.Preset = "off"
	s.Transport.UET.LB = lb
	s.Workload = scenario.Workload{Kind: "permutation"}
	return job(s, 2*units.MB)
}

// UET (issue 18): spraying a permutation over 256 entropies gets every
// flow within 1.15× of its ideal on average and 1.3× at worst, where
// ECMP's collisions double FCTs; one entropy per connection is ECMP
// again, close to RoCE's.
func TestUETPermutationSpraying(t *testing.T) {
	res := map[string]float64{}
	for _, c := range []struct{ name, kind, lb string }{
		{"roce", "roce", ""}, {"spray", "uet", "spray"}, {"reps", "uet", "reps"}, {"single", "uet", "single"},
	} {
		_, r := runSim(t, uetPermutation(t, c.kind, c.lb))
		t.Logf("%-6s mean slowdown %.3f, max %.3f, mean FCT %.1f µs", c.name, r.Slowdown.Mean, r.Slowdown.Max, r.FCT.Mean*1e6)
		res[c.name] = r.FCT.Mean
		if c.kind == "uet" && c.lb != "single" {
			if r.Slowdown.Mean > 1.15 || r.Slowdown.Max > 1.3 {
				t.Errorf("%s: slowdown mean %.3f max %.3f, want ≤ 1.15 and ≤ 1.3", c.name, r.Slowdown.Mean, r.Slowdown.Max)
			}
		}
		if c.kind == "uet" && (r.Timeouts != 0 || r.Retransmits != 0) {
			t.Errorf("%s: %d timeouts, %d retransmits on a lossless fabric", c.name, r.Timeouts, r.Retransmits)
		}
	}
	if x := res["single"] / res["roce"]; x < 0.85 || x > 1.15 {
		t.Errorf("single entropy's mean FCT is %.2f× RoCE/ECMP's, want within 15%%", x)
	}
}

// Trimming (issue 18): a 31-to-1 incast on a lossy fabric with a small
// buffer. With trimming every loss is a NACK at once: no timeouts, and
// the target's link stays ≥ 90% busy; without it UET waits for its RTO.
func TestUETIncastTrimming(t *testing.T) {
	for _, trim := range []bool{true, false} {
		s := leafSpine(32, 8, 8)
		s.Topology.HostLink.Rate, s.Topology.FabricLink.Rate = 100*units.Gbps, 100*units.Gbps
		s.Switch.PFC.Enabled, s.Switch.ECN.Enabled = false, true
		s.Switch.Buffer = 2 * units.MiB
		s.Switch.Trimming = trim
		s.Transport.Kind = "uet"
		s.Workload = scenario.Workload{Kind: "incast", Senders: 31, Target: 0}
		sim, r := runSim(t, job(s, 1*units.MiB))
		goodput := 31 * float64(units.MiB) * 8 / r.CCTS / 100e9
		t.Logf("trimming %v: CCT %.1f µs, goodput %.1f%% of the link, %d trims, %d drops, %d timeouts", trim, r.CCTS*1e6, 100*goodput, sim.Topo.Net.TrimmedPackets, r.Drops, r.Timeouts)
		if !trim {
			if r.Timeouts == 0 {
				t.Error("without trimming the drops cost no timeout: the case is too easy")
			}
			continue
		}
		if r.Timeouts != 0 || r.Drops != 0 {
			t.Errorf("with trimming: %d timeouts, %d drops", r.Timeouts, r.Drops)
		}
		if sim.Topo.Net.TrimmedPackets == 0 {
			t.Error("nothing was trimmed: the buffer never overflowed")
		}
		if goodput < 0.9 {
			t.Errorf("goodput %.1f%% of the target's link, want ≥ 90%%", 100*goodput)
		}
	}
}

// The same UET run twice is the same run, event for event.
func TestUETDeterministic(t *testing.T) {
	_, a := runSim(t, uetPermutation(t, "uet", "reps"))
	_, b := runSim(t, uetPermutation(t, "uet", "reps"))
	if a.Events != b.Events || a.FCT != b.FCT || a.CCTS != b.CCTS {
		t.Errorf("two runs differ: %d vs %d events, FCT %+v vs %+v", a.Events, b.Events, a.FCT, b.FCT)
	}
}
